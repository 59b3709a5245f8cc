# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of dense_jagged_cat_jagged_out (GPU side): upstream's Triton kernels, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dense_jagged_cat_jagged_out as kernel  # noqa: E402
from dense_jagged_cat_jagged_out_support import BaseApi, register  # noqa: E402


@register("dense_jagged_cat_jagged_out")
class DenseJaggedCatJaggedOutApi(BaseApi):
    """Inputs (generate_dense_jagged_cat_jagged_out.py): a [B], b [sum_L], b_offsets [B + 1], max_seq_len.
    Outputs: c [sum_L + B], c_offsets [B + 1]."""

    def __call__(self, input_data, with_output=False):
        a, b, b_offsets, max_seq_len = input_data.args[:4]
        return kernel.dense_jagged_cat_jagged_out(a, b, b_offsets, int(max_seq_len))
