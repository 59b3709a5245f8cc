# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged2_softmax (NPU side): calls the port beside this file."""

import os
import sys

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
        y = kernel.jagged2_softmax_forward(x, offsets, offsets_total, n, transpose)
        return y, kernel.jagged2_softmax_backward(dy, y, offsets, offsets_total, n, transpose)
