# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of batched_dense_vec_jagged_2d_matmul (GPU side): upstream's Triton kernels, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import batched_dense_vec_jagged_2d_matmul as kernel  # noqa: E402
from batched_dense_vec_jagged_2d_matmul_support import BaseApi, register  # noqa: E402


@register("batched_dense_vec_jagged_2d_matmul")
class BatchedDenseVecJagged2dMatmulApi(BaseApi):
    """Inputs (generate_batched_dense_vec_jagged_2d_matmul.py): dense [B * H, max_seq_len], values [sum_L, H * D], offsets [B + 1].
    Outputs: out [B * H, D]."""

    def __call__(self, input_data, with_output=False):
        dense, values, offsets = input_data.args[:3]
        return kernel.batched_dense_vec_jagged_2d_matmul(dense, values, offsets)
