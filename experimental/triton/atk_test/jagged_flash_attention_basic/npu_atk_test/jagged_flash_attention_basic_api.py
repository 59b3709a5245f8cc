# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_flash_attention_basic (NPU side): calls the port beside this file."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_flash_attention_basic as kernel  # noqa: E402
from jagged_flash_attention_basic_support import BaseApi, register  # noqa: E402


@register("jagged_flash_attention_basic")
class JaggedFlashAttentionBasicApi(BaseApi):
    """Inputs (generate_jagged_flash_attention_basic.py): q, k, v, offsets, max_seq_len, use_mask,
    dout. Outputs: out, lse, dq, dk, dv."""

    def __call__(self, input_data, with_output=False):
        q, k, v, offsets, max_seq_len, use_mask, dout = input_data.args[:7]
        n, mask = int(max_seq_len), bool(use_mask)
        out, lse = kernel.jagged_flash_attention_basic_fwd(
            q, k, v, offsets, n, mask, out_dtype=torch.float32
        )
        dq, dk, dv = kernel.jagged_flash_attention_basic_bwd(
            q, k, v, out, offsets, dout, lse, n, mask
        )
        return out.to(q.dtype), lse, dq, dk, dv
