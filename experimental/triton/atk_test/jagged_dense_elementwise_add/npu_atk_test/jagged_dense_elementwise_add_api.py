# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_dense_elementwise_add (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_dense_elementwise_add as kernel  # noqa: E402
from jagged_dense_elementwise_add_support import BaseApi, register  # noqa: E402


@register("jagged_dense_elementwise_add")
class JaggedDenseElementwiseAddApi(BaseApi):
    """Inputs (generate_jagged_dense_elementwise_add.py): x, offsets, y, max_seq_len, dout.
    Outputs: out (forward), dy (backward; dx is dout itself)."""

    def __call__(self, input_data, with_output=False):
        x, offsets, y, max_seq_len, dout = input_data.args[:5]
        out = kernel.jagged_dense_elementwise_add_fwd(x, offsets, y)
        _, dy = kernel.jagged_dense_elementwise_add_bwd(dout, offsets, int(max_seq_len))
        return out, dy
