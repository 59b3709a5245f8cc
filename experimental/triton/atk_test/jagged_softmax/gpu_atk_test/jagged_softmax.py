# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernel, unmodified: FBGEMM's own module (sll/triton/triton_jagged_softmax.py of the
# fbgemm_gpu package), loaded from the pinned fbgemm-gpu-cpu==1.9.0 wheel, whose sources are
# byte-identical to pytorch/FBGEMM at 71d6f8b229d964e61cac24df9bbd2ffcc4b4d378. The loader checks
# the file's sha256 and never runs fbgemm_gpu/__init__.py. Nothing of upstream is copied here.
"""Upstream jagged_softmax (GPU side): the functions ATK's GPU server calls."""

from jagged_softmax_support import load_upstream

_upstream = load_upstream()
jagged_softmax_ = _upstream.jagged_softmax_
JaggedSoftmax = _upstream.JaggedSoftmax
jagged_softmax_kernel = _upstream.jagged_softmax_kernel
jagged_softmax_backward_kernel = _upstream.jagged_softmax_backward_kernel
