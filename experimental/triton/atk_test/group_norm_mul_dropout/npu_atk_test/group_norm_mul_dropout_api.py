# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of group_norm_mul_dropout (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import group_norm_mul_dropout as kernel  # noqa: E402
from group_norm_mul_dropout_support import DROPOUT_RATIO, EPS, SEED, BaseApi, register  # noqa: E402


@register("group_norm_mul_dropout")
class GroupNormMulDropoutApi(BaseApi):
    """Inputs (generate_group_norm_mul_dropout.py): x, u, weight, bias, dy (x [N, H * D], weight
    [H]). Outputs: y, dx, du, dweight, dbias (forward in training at the cases' dropout ratio and
    seed, then the gradients of dy through group_norm_mul_dropout)."""

    def __call__(self, input_data, with_output=False):
        x, u, weight, bias, dy = input_data.args[:5]
        heads = weight.numel()
        leaves = tuple(t.detach().requires_grad_() for t in (x, u, weight, bias))
        y = kernel.group_norm_mul_dropout(
            *leaves,
            EPS,
            DROPOUT_RATIO,
            True,
            num_heads=heads,
            linear_dim=x.size(1) // heads,
            seed=SEED,
        )
        grads = torch.autograd.grad(y, leaves, dy)
        return (y.detach(), *grads)
