# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of rms_norm (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rms_norm as kernel  # noqa: E402
from rms_norm_support import EPS, BaseApi, register  # noqa: E402


@register("rms_norm")
class RMSNormApi(BaseApi):
    """Inputs (generate_rms_norm.py): x, weight, dy. Outputs: y, dx, dweight (forward,
    then the gradients of dy through rms_norm)."""

    def __call__(self, input_data, with_output=False):
        x, weight, dy = input_data.args[:3]
        x_, weight_ = (t.detach().requires_grad_() for t in (x, weight))
        y = kernel.rms_norm(x_, weight_, EPS)
        grads = torch.autograd.grad(y, (x_, weight_), dy)
        return (y.detach(), *grads)
