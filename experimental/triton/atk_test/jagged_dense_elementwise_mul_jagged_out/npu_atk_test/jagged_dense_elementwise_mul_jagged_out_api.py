# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_dense_elementwise_mul_jagged_out (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_dense_elementwise_mul_jagged_out as kernel  # noqa: E402
from jagged_dense_elementwise_mul_jagged_out_support import BaseApi, register  # noqa: E402


@register("jagged_dense_elementwise_mul_jagged_out")
class JaggedDenseElementwiseMulJaggedOutApi(BaseApi):
    """Inputs (generate_jagged_dense_elementwise_mul_jagged_out.py): x, y, seq_lengths, offsets, max_seq_len, dout.
    Outputs: out (forward), dx (backward: the same kernel on dout)."""

    def __call__(self, input_data, with_output=False):
        x, y, seq_lengths, offsets, max_seq_len, dout = input_data.args[:6]
        n = int(max_seq_len)
        out = kernel.jagged_dense_elementwise_mul_jagged_out_fwd(x, y, seq_lengths, offsets, n)
        dx = kernel.jagged_dense_elementwise_mul_jagged_out_fwd(dout, y, seq_lengths, offsets, n)
        return out, dx
