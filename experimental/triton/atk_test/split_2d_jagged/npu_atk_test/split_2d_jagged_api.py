# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of split_2d_jagged (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import split_2d_jagged as kernel  # noqa: E402
from split_2d_jagged_support import BaseApi, register  # noqa: E402


@register("split_2d_jagged")
class Split2DJaggedApi(BaseApi):
    """Inputs (generate_split_2d_jagged.py): values, offsets_a, offsets_b, d_values_a, d_values_b,
    max_seq_len, prefix, rows_a, rows_b. Outputs: values_a, values_b (values cut per sequence,
    b's first `prefix` rows first), then d_values (the gradient of d_values_a and d_values_b
    through it)."""

    def __call__(self, input_data, with_output=False):
        values, offsets_a, offsets_b, d_a, d_b, max_seq_len, prefix, rows_a, rows_b = (
            input_data.args[:9]
        )
        values_ = values.detach().requires_grad_()
        a, b = kernel.triton_split_2D_jagged(
            values_, int(max_seq_len), offsets_a, offsets_b, 0, int(prefix), int(rows_a),
            int(rows_b),
        )  # fmt: skip
        (d_values,) = torch.autograd.grad((a, b), (values_,), (d_a, d_b))
        return a.detach(), b.detach(), d_values
