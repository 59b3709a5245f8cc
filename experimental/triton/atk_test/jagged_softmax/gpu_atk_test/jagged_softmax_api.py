# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_softmax (GPU side): calls upstream's kernels, loaded by the file beside this one."""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_softmax as kernel  # noqa: E402
from jagged_softmax_support import BaseApi, register  # noqa: E402


@register("jagged_softmax")
class JaggedSoftmaxApi(BaseApi):
    """Inputs (generate_jagged_softmax.py): x, offsets, max_seq_len, dy. Outputs: y, dx."""

    def __call__(self, input_data, with_output=False):
        x, offsets, max_seq_len, dy = input_data.args[:4]
        n = int(max_seq_len)
        # Upstream's JaggedSoftmax.apply without autograd: its forward, then its backward with
        # what the forward saves (upstream's public jagged_softmax defaults to a compiled op).
        y = kernel.jagged_softmax_(x, offsets, n)
        ctx = types.SimpleNamespace(saved_tensors=(y, offsets), max_seq_len=n)
        dx = kernel.JaggedSoftmax.backward(ctx, dy)[0]
        return y, dx
