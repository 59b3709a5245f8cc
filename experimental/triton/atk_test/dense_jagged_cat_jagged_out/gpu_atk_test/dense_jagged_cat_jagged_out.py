# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: FBGEMM's own module (sll/triton/triton_dense_jagged_cat_jagged_out.py of the fbgemm_gpu
# package), loaded from the pinned fbgemm-gpu-cpu==1.9.0 wheel, whose sources are byte-identical to
# pytorch/FBGEMM at 71d6f8b229d964e61cac24df9bbd2ffcc4b4d378. The loader checks the file's sha256
# and never runs fbgemm_gpu/__init__.py. Nothing of upstream is copied into this repository.
"""Upstream dense_jagged_cat_jagged_out (GPU side): the functions ATK's GPU server calls."""

from dense_jagged_cat_jagged_out_support import load_upstream

_upstream = load_upstream()
dense_jagged_cat_jagged_out = _upstream.dense_jagged_cat_jagged_out
dense_jagged_cat_jagged_out_kernel = _upstream.dense_jagged_cat_jagged_out_kernel
