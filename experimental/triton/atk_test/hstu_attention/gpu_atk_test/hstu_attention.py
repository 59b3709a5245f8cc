# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: NVIDIA/recsys-examples' own module
# (examples/hstu/ops/triton_ops/triton_hstu_attention.py), read from the local checkout that
# AUTOTUNE_RECSYS_EXAMPLES names, of commit 43465aeabf61515e28d74cbb5234ff7c627dcc19. The loader
# checks the file's sha256 (and that of the commons module it imports) against the pin. Nothing of
# upstream is copied into this repository.
"""Upstream hstu_attention (GPU side): the functions ATK's GPU server calls."""

from hstu_attention_support import load_upstream

_upstream = load_upstream()
triton_hstu_mha = _upstream.triton_hstu_mha
triton_cached_hstu_mha = _upstream.triton_cached_hstu_mha
triton_hstu_attention_fwd = _upstream.triton_hstu_attention_fwd
triton_hstu_attention_bwd = _upstream.triton_hstu_attention_bwd
_hstu_attn_fwd = _upstream._hstu_attn_fwd
_hstu_attn_bwd = _upstream._hstu_attn_bwd
