# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of add_position_embeddings (NPU side): calls the port beside this file."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_position_embeddings as kernel  # noqa: E402
from add_position_embeddings_support import BaseApi, register  # noqa: E402


@register("add_position_embeddings")
class AddPositionEmbeddingsApi(BaseApi):
    """Inputs (generate_add_position_embeddings.py): x, offsets, high_inds, max_seq_len, dense,
    scale, dout. Outputs: out = x * scale + dense[clamped position], then dx and ddense (the
    gradients of dout)."""

    def __call__(self, input_data, with_output=False):
        x, offsets, high_inds, max_seq_len, dense, scale, dout = input_data.args[:7]
        n, s = int(max_seq_len), float(scale)
        out = kernel.add_position_embeddings_fwd(x, offsets, high_inds, n, dense, s)
        dx, ddense = kernel.add_position_embeddings_bwd(
            dout, offsets, high_inds, n, dense.size(0), s
        )
        return out, dx, ddense
