# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged2_to_padded_dense (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged2_to_padded_dense as kernel  # noqa: E402
from jagged2_to_padded_dense_support import PADDING_VALUE, BaseApi, register  # noqa: E402


@register("jagged2_to_padded_dense")
class Jagged2ToPaddedDenseApi(BaseApi):
    """Inputs (generate_jagged2_to_padded_dense.py): values, offsets, max_seq_len, ddense.
    Outputs: dense (forward), dvalues (backward, padded_dense_to_jagged2)."""

    def __call__(self, input_data, with_output=False):
        values, offsets, max_seq_len, ddense = input_data.args[:4]
        n = int(max_seq_len)
        dense = kernel.jagged2_to_padded_dense_fwd(values, offsets, n, PADDING_VALUE)
        dvalues = kernel.padded_dense_to_jagged2_fwd(ddense, offsets, n)
        return dense, dvalues
