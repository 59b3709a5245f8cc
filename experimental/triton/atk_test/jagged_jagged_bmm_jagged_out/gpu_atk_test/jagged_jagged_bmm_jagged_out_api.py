# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of jagged_jagged_bmm_jagged_out (GPU side): upstream's Triton kernels, loaded by the file beside this one."""

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
        lengths = offsets[1:] - offsets[:-1]
        leaves = [t.detach().clone().requires_grad_() for t in (x, y)]
        z = kernel.jagged_jagged_bmm_jagged_out(
            *leaves,
            lengths,
            offsets,
            lengths,
            offsets,
            lengths * lengths,
            z_offsets,
            int(max_seq_len),
            allow_tf32=False,
        )
        z.backward(dz)
        return z.detach(), leaves[0].grad, leaves[1].grad
