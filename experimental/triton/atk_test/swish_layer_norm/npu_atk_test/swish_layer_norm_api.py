# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of swish_layer_norm (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import swish_layer_norm as kernel  # noqa: E402
from swish_layer_norm_support import EPS, BaseApi, register  # noqa: E402


@register("swish_layer_norm")
class SwishLayerNormApi(BaseApi):
    """Inputs (generate_swish_layer_norm.py): x, weight, bias, dy. Outputs: y, dx, dweight, dbias (forward,
    then the gradients of dy through swish_layer_norm)."""

    def __call__(self, input_data, with_output=False):
        x, weight, bias, dy = input_data.args[:4]
        x_, weight_, bias_ = (t.detach().requires_grad_() for t in (x, weight, bias))
        y = kernel.swish_layer_norm(x_, weight_, bias_, EPS)
        grads = torch.autograd.grad(y, (x_, weight_, bias_), dy)
        return (y.detach(), *grads)
