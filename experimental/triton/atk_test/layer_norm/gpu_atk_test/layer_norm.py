# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: NVIDIA/recsys-examples' own module
# (examples/hstu/ops/triton_ops/triton_layer_norm.py), read from the local checkout that AUTOTUNE_RECSYS_EXAMPLES names, of
# commit 43465aeabf61515e28d74cbb5234ff7c627dcc19. The loader checks the file's sha256 (and that of the
# commons module it imports) against the pin. Nothing of upstream is copied into this repository.
"""Upstream layer_norm (GPU side): the functions ATK's GPU server calls."""

from layer_norm_support import load_upstream

_upstream = load_upstream()
triton_layer_norm = _upstream.triton_layer_norm
LayerNormFunction = _upstream.LayerNormFunction
_weighted_layer_norm_fwd = _upstream._weighted_layer_norm_fwd
_weighted_layer_norm_bwd_dx = _upstream._weighted_layer_norm_bwd_dx
_layer_norm_bwd_dwdb = _upstream._layer_norm_bwd_dwdb
