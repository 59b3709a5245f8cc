# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: NVIDIA/recsys-examples' own module
# (examples/commons/ops/triton_ops/triton_jagged.py), read from the local checkout that
# AUTOTUNE_RECSYS_EXAMPLES names, of commit 43465aeabf61515e28d74cbb5234ff7c627dcc19. The loader
# checks the file's sha256 (and that of the commons module it imports) against the pin. Nothing
# of upstream is copied into this repository.
"""Upstream jagged_dense_bmm_broadcast_add (GPU side): the functions ATK's GPU server calls."""

from jagged_dense_bmm_broadcast_add_support import load_upstream

_upstream = load_upstream()
triton_jagged_dense_bmm_broadcast_add = _upstream.triton_jagged_dense_bmm_broadcast_add
_JaggedDenseBmmBroadcastAddFunction = _upstream._JaggedDenseBmmBroadcastAddFunction
jagged_dense_bmm_broadcast_add_kernel = _upstream.jagged_dense_bmm_broadcast_add_kernel
_jagged_jagged_bmm_reduce_sum = _upstream._jagged_jagged_bmm_reduce_sum
