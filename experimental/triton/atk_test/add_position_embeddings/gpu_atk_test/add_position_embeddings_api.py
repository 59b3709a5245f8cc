# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of add_position_embeddings (GPU side): calls upstream's functions, loaded by the
file beside this one."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_position_embeddings as kernel  # noqa: E402
from add_position_embeddings_support import BaseApi, register  # noqa: E402


class _Ctx:
    """What torch.autograd gives a Function's forward and backward: saved tensors and fields."""

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors


@register("add_position_embeddings")
class AddPositionEmbeddingsApi(BaseApi):
    """Inputs (generate_add_position_embeddings.py): x, offsets, high_inds, max_seq_len, dense,
    scale, dout. Outputs: out, then dx and ddense (upstream's _AddPositionEmbeddingsFunction
    forward and backward)."""

    def __call__(self, input_data, with_output=False):
        x, offsets, high_inds, max_seq_len, dense, scale, dout = input_data.args[:7]
        function, ctx = kernel._AddPositionEmbeddingsFunction, _Ctx()
        out = function.forward(ctx, x, offsets, high_inds, int(max_seq_len), dense, float(scale))
        grads = function.backward(ctx, dout)
        return out, grads[0], grads[4]
