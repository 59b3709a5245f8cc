# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_jagged_elementwise (GPU side): upstream's Triton kernels, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_jagged_elementwise as kernel  # noqa: E402
from jagged_jagged_elementwise_support import BaseApi, register  # noqa: E402


@register("jagged_jagged_elementwise")
class JaggedJaggedElementwiseApi(BaseApi):
    """Inputs (generate_jagged_jagged_elementwise.py): x, y ([N, D] values of two jagged tensors of one layout).
    Outputs: sum (x + y), product (x * y)."""

    def __call__(self, input_data, with_output=False):
        x, y = input_data.args[:2]
        total = kernel.triton_jagged_add_jagged(x, y)
        return total, kernel.triton_jagged_mul_jagged(x, y)
