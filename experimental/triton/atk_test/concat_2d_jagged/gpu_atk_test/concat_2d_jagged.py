# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: NVIDIA/recsys-examples' own module
# (examples/commons/ops/triton_ops/triton_jagged.py), read from the local checkout that
# AUTOTUNE_RECSYS_EXAMPLES names, of commit 43465aeabf61515e28d74cbb5234ff7c627dcc19. The loader
# checks the file's sha256 (and that of the commons module it imports) against the pin. Nothing of
# upstream is copied into this repository.
"""Upstream concat_2d_jagged (GPU side): the functions ATK's GPU server calls."""

from concat_2d_jagged_support import load_upstream

_upstream = load_upstream()
triton_concat_2D_jagged = _upstream.triton_concat_2D_jagged
triton_concat_2D_jagged_jagged = _upstream.triton_concat_2D_jagged_jagged
triton_concat_2D_dense_jagged = _upstream.triton_concat_2D_dense_jagged
_Concat2DJaggedFunction = _upstream._Concat2DJaggedFunction
concat_2D_jagged = _upstream.concat_2D_jagged
concat_2D_jagged_jagged_w_prefix = _upstream.concat_2D_jagged_jagged_w_prefix
split_2D_jagged = _upstream.split_2D_jagged
split_2D_jagged_jagged_w_prefix = _upstream.split_2D_jagged_jagged_w_prefix
