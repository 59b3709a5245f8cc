# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of addmm (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import addmm as kernel  # noqa: E402
from addmm_support import BaseApi, register  # noqa: E402


@register("addmm")
class AddmmApi(BaseApi):
    """Inputs (generate_addmm.py): x, weight, bias, dy. Outputs: z = x @ weight + bias, y = silu(z),
    then dx, dweight, dbias (the gradients of dy through y)."""

    def __call__(self, input_data, with_output=False):
        x, weight, bias, dy = input_data.args[:4]
        z, y = kernel.addmm_fwd(x, weight, bias, silu=True)
        dx, dweight, dbias = kernel.addmm_bwd(x, weight, z, dy, bias.dim() == 1, silu=True)
        return z, y, dx, dweight, dbias
