# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_jagged_bmm (GPU side): calls upstream's Triton autograd Function, loaded by the file beside this one."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_jagged_bmm as kernel  # noqa: E402
from jagged_jagged_bmm_support import BaseApi, register  # noqa: E402


@register("jagged_jagged_bmm")
class JaggedJaggedBmmApi(BaseApi):
    """Inputs (generate_jagged_jagged_bmm.py): x, y, offsets, max_seq_len, dout. Outputs: out, dx, dy."""

    def __call__(self, input_data, with_output=False):
        x, y, offsets, max_seq_len, dout = input_data.args[:5]
        x, y = (t.detach().requires_grad_() for t in (x, y))
        out = kernel.JaggedJaggedBmm.apply(x, y, offsets, int(max_seq_len), False)
        dx, dy = torch.autograd.grad(out, (x, y), dout)
        return out.detach(), dx, dy
