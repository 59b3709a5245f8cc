# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_dense_elementwise_add (GPU side): upstream's Triton path, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_dense_elementwise_add as kernel  # noqa: E402
from jagged_dense_elementwise_add_support import BaseApi, register  # noqa: E402


@register("jagged_dense_elementwise_add")
class JaggedDenseElementwiseAddApi(BaseApi):
    """Inputs (generate_jagged_dense_elementwise_add.py): x, offsets, y, max_seq_len, dout.
    Outputs: out (JaggedDenseAdd.forward), dy (JaggedDenseAdd.backward's grad_dense)."""

    def __call__(self, input_data, with_output=False):
        x, offsets, y, max_seq_len, dout = input_data.args[:5]
        out = kernel.dense_to_jagged(
            y, [offsets], operation_function="add", operation_jagged_values=x
        )[0]
        dy = kernel.jagged_to_dense(dout, [offsets], [int(max_seq_len)])
        return out, dy
