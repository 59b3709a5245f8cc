# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of hstu_attention (GPU side): calls upstream's functions, loaded by the file
beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hstu_attention as kernel  # noqa: E402
from hstu_attention_support import BaseApi, register  # noqa: E402


@register("hstu_attention")
class HstuAttentionApi(BaseApi):
    """The NPU API's inputs and outputs, through upstream's triton_hstu_mha (enable_tma=False,
    its default) and triton_cached_hstu_mha."""

    def __call__(self, input_data, with_output=False):
        q, k, v, offsets, targets, n, alpha, contextual, window, dout = input_data.args[:10]
        delta_q, k_cache, v_cache, cache_offsets = input_data.args[10:14]
        targets = targets if targets.numel() else None
        n, alpha, contextual, window = int(n), float(alpha), int(contextual), int(window)
        q, k, v = (x.detach().requires_grad_() for x in (q, k, v))
        out = kernel.triton_hstu_mha(n, alpha, q, k, v, offsets, targets, window, contextual)
        out.backward(dout)
        cached = kernel.triton_cached_hstu_mha(
            n, alpha, delta_q, k_cache, v_cache, cache_offsets, targets, window, contextual
        )
        return out.detach(), q.grad, k.grad, v.grad, cached
