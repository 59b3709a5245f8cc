# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_dense_flash_attention (GPU side): calls upstream's kernel, loaded by the file beside this one."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_dense_flash_attention as kernel  # noqa: E402
from jagged_dense_flash_attention_support import BaseApi, register  # noqa: E402


@register("jagged_dense_flash_attention")
class JaggedDenseFlashAttentionApi(BaseApi):
    """Inputs (generate_jagged_dense_flash_attention.py): q, k, v, attn_bias, offsets, max_seq_len, dout.
    Outputs: out, lse, dq, dk, dv, dbias."""

    def __call__(self, input_data, with_output=False):
        q, k, v, attn_bias, offsets, max_seq_len, dout = input_data.args[:7]
        n = int(max_seq_len)
        out, lse = kernel.jagged_dense_flash_attention_fwd(q, k, v, attn_bias, offsets, n)
        if q.dtype != torch.float32:
            raise NotImplementedError("upstream's backward supports float32 only")
        dq, dk, dv, dbias = kernel.jagged_dense_flash_attention_bwd(
            q, k, v, out, lse, dout, attn_bias, offsets, n
        )
        return out, lse, dq, dk, dv, dbias
