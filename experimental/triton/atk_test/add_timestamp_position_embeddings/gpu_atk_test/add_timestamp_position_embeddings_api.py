# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
"""ATK custom API of add_timestamp_position_embeddings (GPU side): calls upstream's functions,
loaded by the file beside this one."""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import add_timestamp_position_embeddings as kernel  # noqa: E402
from add_timestamp_position_embeddings_support import BaseApi, register  # noqa: E402


@register("add_timestamp_position_embeddings")
class AddTimestampPositionEmbeddingsApi(BaseApi):
    """Inputs (generate_add_timestamp_position_embeddings.py): x, offsets, pos, ts, timestamps,
    max_seq_len, max_contextual_seq_len, lengths, num_targets, dout. Outputs: out, then dpos and
    dts (upstream's triton_add_timestamp_positional_embeddings and its backward)."""

    def __call__(self, input_data, with_output=False):
        x, offsets, pos, ts, stamps, n, contextual, lengths, targets, dout = input_data.args[:10]
        leaves = tuple(t.detach().requires_grad_() for t in (x, pos, ts))
        out = kernel.triton_add_timestamp_positional_embeddings(
            leaves[0], offsets, leaves[1], leaves[2], stamps, int(n), int(contextual), lengths,
            targets, False, "sqrt",
        )  # fmt: skip
        _, dpos, dts = torch.autograd.grad(out, leaves, dout)
        return out.detach(), dpos, dts
