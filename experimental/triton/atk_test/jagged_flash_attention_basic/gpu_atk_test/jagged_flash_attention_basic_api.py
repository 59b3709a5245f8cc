# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_flash_attention_basic (GPU side): calls upstream's kernel, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_flash_attention_basic as kernel  # noqa: E402
from jagged_flash_attention_basic_support import BaseApi, register  # noqa: E402


@register("jagged_flash_attention_basic")
class JaggedFlashAttentionBasicApi(BaseApi):
    """Inputs (generate_jagged_flash_attention_basic.py): q, k, v, offsets, max_seq_len, use_mask,
    dout. Outputs: out, lse (in the input dtype upstream), dq, dk, dv."""

    def __call__(self, input_data, with_output=False):
        q, k, v, offsets, max_seq_len, use_mask, dout = input_data.args[:7]
        n, mask = int(max_seq_len), bool(use_mask)
        # Upstream's forward takes k transposed, its backward k as is (as its autograd function).
        out, lse = kernel.jagged_flash_attention_basic_fwd(q, k.T, v, offsets, n, mask)
        dq, dk, dv = kernel.jagged_flash_attention_basic_backward(
            q, k, v, out, offsets, dout, lse, n, mask
        )
        return out, lse, dq, dk, dv
