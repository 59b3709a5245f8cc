# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_self_substraction_jagged_out (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_self_substraction_jagged_out as kernel  # noqa: E402
from jagged_self_substraction_jagged_out_support import BaseApi, register  # noqa: E402


@register("jagged_self_substraction_jagged_out")
class JaggedSelfSubstractionJaggedOutApi(BaseApi):
    """Inputs (generate_jagged_self_substraction_jagged_out.py): a [sum_L], offsets_a [B + 1], offsets_b [B + 1] (cumsum of N^2), max_seq_len.
    Outputs: b [offsets_b[-1]]."""

    def __call__(self, input_data, with_output=False):
        a, offsets_a, offsets_b, max_seq_len = input_data.args[:4]
        return kernel.jagged_self_substraction_jagged_out(a, offsets_a, offsets_b, int(max_seq_len))
