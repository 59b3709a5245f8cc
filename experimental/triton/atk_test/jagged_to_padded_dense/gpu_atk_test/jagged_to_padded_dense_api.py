# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_to_padded_dense (GPU side): calls upstream's kernel, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_to_padded_dense as kernel  # noqa: E402
from jagged_to_padded_dense_support import PADDING_VALUE, BaseApi, register  # noqa: E402


@register("jagged_to_padded_dense")
class JaggedToPaddedDenseApi(BaseApi):
    """Inputs (generate_jagged_to_padded_dense.py): values, offsets, max_seq_len. Output: dense."""

    def __call__(self, input_data, with_output=False):
        values, offsets, max_seq_len = input_data.args[:3]
        return kernel.jagged_to_dense(values, [offsets], [int(max_seq_len)], PADDING_VALUE)
