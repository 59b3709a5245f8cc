# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of silu (GPU side): calls upstream's functions, loaded by the file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import silu as kernel  # noqa: E402
from silu_support import BaseApi, register  # noqa: E402


@register("silu")
class SiluApi(BaseApi):
    """Inputs (generate_silu.py): x, dy. Outputs: y = silu(x) (upstream's triton_silu_fwd), then
    dx = dy * silu'(x) (its triton_silu_bwd)."""

    def __call__(self, input_data, with_output=False):
        x, dy = input_data.args[:2]
        return kernel.triton_silu_fwd(x), kernel.triton_silu_bwd(dy, x)
