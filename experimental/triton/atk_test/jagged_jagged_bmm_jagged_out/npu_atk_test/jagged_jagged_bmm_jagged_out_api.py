# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_jagged_bmm_jagged_out (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import jagged_jagged_bmm_jagged_out as kernel  # noqa: E402
from jagged_jagged_bmm_jagged_out_support import BaseApi, register  # noqa: E402


@register("jagged_jagged_bmm_jagged_out")
class JaggedJaggedBmmJaggedOutApi(BaseApi):
    """Inputs (generate_jagged_jagged_bmm_jagged_out.py): x [sum_L, D], y [sum_L, D], offsets [B + 1], z_offsets [B + 1] (cumsum of L^2), max_seq_len, dz [z_offsets[-1]].
    Outputs: z [z_offsets[-1]] (forward), dx and dy [sum_L, D] (backward)."""

    def __call__(self, input_data, with_output=False):
        x, y, offsets, z_offsets, max_seq_len, dz = input_data.args[:6]
        z = kernel.jagged_jagged_bmm_jagged_out_fwd(x, y, offsets, z_offsets, int(max_seq_len))
        dx, dy = kernel.jagged_jagged_bmm_jagged_out_bwd(
            x, y, offsets, z_offsets, int(max_seq_len), dz
        )
        return z, dx, dy
