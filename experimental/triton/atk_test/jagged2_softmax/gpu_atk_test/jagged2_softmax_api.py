# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged2_softmax (GPU side): calls upstream's kernels, loaded by the file beside this one."""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged2_softmax as kernel  # noqa: E402
from jagged2_softmax_support import BaseApi, register  # noqa: E402


@register("jagged2_softmax")
class Jagged2SoftmaxApi(BaseApi):
    """Inputs (generate_jagged2_softmax.py): x, offsets, offsets_total, max_seq_len, transpose, dy.
    Outputs: y, dx."""

    def __call__(self, input_data, with_output=False):
        x, offsets, offsets_total, max_seq_len, transpose, dy = input_data.args[:6]
        n, transpose = int(max_seq_len), bool(transpose)
        # Upstream's forward, then its backward with what the forward saves.
        y = kernel.jagged2_softmax(x, offsets, offsets_total, n, transpose).detach()
        ctx = types.SimpleNamespace(
            saved_tensors=(y, offsets_total, offsets, offsets),
            max_seq_len_row=n,
            max_seq_len_head=n,
            transpose=transpose,
        )
        return y, kernel.Jagged2Softmax.backward(ctx, dy)[0]
