# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_dense_bmm_broadcast_add (GPU side): calls upstream's autograd
Function, loaded by the file beside this one."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_dense_bmm_broadcast_add as kernel  # noqa: E402
from jagged_dense_bmm_broadcast_add_support import BaseApi, register  # noqa: E402


@register("jagged_dense_bmm_broadcast_add")
class JaggedDenseBmmBroadcastAddApi(BaseApi):
    """Inputs (generate_jagged_dense_bmm_broadcast_add.py): x, y, bias, offsets, max_seq_len,
    dout. Outputs: out, dx, dy, dbias (upstream's triton_jagged_dense_bmm_broadcast_add and its
    backward)."""

    def __call__(self, input_data, with_output=False):
        x, y, bias, offsets, max_seq_len, dout = input_data.args[:6]
        x, y, bias = (t.detach().requires_grad_() for t in (x, y, bias))
        out = kernel.triton_jagged_dense_bmm_broadcast_add(int(max_seq_len), offsets, x, y, bias)
        dx, dy, dbias = torch.autograd.grad(out, (x, y, bias), dout)
        return out.detach(), dx, dy, dbias
