# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of multi_head_jagged_flash_attention (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import multi_head_jagged_flash_attention as kernel  # noqa: E402
from multi_head_jagged_flash_attention_support import BaseApi, register  # noqa: E402


@register("multi_head_jagged_flash_attention")
class MultiHeadJaggedFlashAttentionApi(BaseApi):
    """Inputs (generate_multi_head_jagged_flash_attention.py): q, k, v [H, sum_L, D], offsets,
    max_seq_len, dout. Outputs: out, lse, dq, dk, dv."""

    def __call__(self, input_data, with_output=False):
        q, k, v, offsets, max_seq_len, dout = input_data.args[:6]
        n = int(max_seq_len)
        out, lse = kernel.multi_head_jagged_flash_attention_fwd(
            q, k, v, offsets, n, out_dtype=torch.float32
        )
        dq, dk, dv = kernel.multi_head_jagged_flash_attention_bwd(
            q, k, v, out, offsets, dout, lse, n
        )
        return out.to(q.dtype), lse, dq, dk, dv
