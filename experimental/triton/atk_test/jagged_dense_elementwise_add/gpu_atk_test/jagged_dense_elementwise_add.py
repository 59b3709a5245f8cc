# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# The upstream kernels, unmodified: FBGEMM's own modules, loaded from the pinned fbgemm-gpu-cpu==1.9.0
# wheel, whose sources are byte-identical to pytorch/FBGEMM at 71d6f8b229d964e61cac24df9bbd2ffcc4b4d378.
# sll/triton/triton_jagged_dense_elementwise_add.py (JaggedDenseAdd, the Triton path) imports its kernels
# from triton/jagged/triton_jagged_tensor_ops.py by absolute package name, which would run
# fbgemm_gpu/__init__.py; so the SLL file's sha256 is checked and the module it imports is loaded (its
# sha256 checked too). Nothing of upstream is copied into this repository.
"""Upstream jagged_dense_elementwise_add (GPU side): the functions ATK's GPU server calls."""

from jagged_dense_elementwise_add_support import load_upstream

_upstream = load_upstream()  # checks the SLL wrapper's hash, loads the kernels' module
dense_to_jagged = _upstream.dense_to_jagged  # JaggedDenseAdd.forward: operation_function="add"
jagged_to_dense = _upstream.jagged_to_dense  # JaggedDenseAdd.backward: grad_dense
triton_dense_to_jagged = _upstream.triton_dense_to_jagged
triton_jagged_to_dense_optimization_2d = _upstream.triton_jagged_to_dense_optimization_2d
