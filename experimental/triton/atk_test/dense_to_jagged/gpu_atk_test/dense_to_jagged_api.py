# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of dense_to_jagged (GPU side): calls upstream's kernel, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dense_to_jagged as kernel  # noqa: E402
from dense_to_jagged_support import BaseApi, register  # noqa: E402


@register("dense_to_jagged")
class DenseToJaggedApi(BaseApi):
    """Inputs (generate_dense_to_jagged.py): dense, offsets, max_seq_len. Output: values."""

    def __call__(self, input_data, with_output=False):
        dense, offsets, max_seq_len = input_data.args[:3]
        return kernel.dense_to_jagged(dense, [offsets])[0]
