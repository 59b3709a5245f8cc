# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of concat_2d_jagged (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import concat_2d_jagged as kernel  # noqa: E402
from concat_2d_jagged_support import BaseApi, register  # noqa: E402


@register("concat_2d_jagged")
class Concat2DJaggedApi(BaseApi):
    """Inputs (generate_concat_2d_jagged.py): values_a, values_b, offsets_a, offsets_b, d_out,
    max_seq_len, prefix, rows_a, rows_b. Outputs: out (a and b joined per sequence, b's first
    `prefix` rows first), then d_values_a, d_values_b (the gradients of d_out through it)."""

    def __call__(self, input_data, with_output=False):
        values_a, values_b, offsets_a, offsets_b, d_out, max_seq_len, prefix = input_data.args[:7]
        a, b = (t.detach().requires_grad_() for t in (values_a, values_b))
        out = kernel.triton_concat_2D_jagged(
            int(max_seq_len), a, b, offsets_a, offsets_b, False, int(prefix)
        )
        d_a, d_b = torch.autograd.grad(out, (a, b), d_out)
        return out.detach(), d_a, d_b
