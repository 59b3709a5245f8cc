"""concat_2d_jagged (recsys-examples' Triton `triton_concat_2D_jagged`): two 2-D jagged tensors
joined sequence by sequence, b's first `prefix` rows, then a's rows, then b's others; forward
(the concat kernel) and backward (the split kernel, as upstream's `_Concat2DJaggedFunction`).

The cases run upstream's jagged-jagged form (`triton_concat_2D_jagged_jagged`, with its
`n_prefix_from_right` as the shape key `prefix`); the port's dense forms (a or b a dense
[B, n, D] tensor, `triton_concat_2D_dense_jagged`) and the replace form are the same two kernels
with other constexprs, tested in tests/test_concat_2d_jagged.py.
"""

from __future__ import annotations

import dataclasses

import torch

from .concat_split import UPSTREAM_FILE, ConcatSplitOp, kernel
from .spec import Tensors

NAME = "concat_2d_jagged"


class Concat2DJagged(ConcatSplitOp):
    name = NAME
    summary = (
        "Join two 2-D jagged tensors per sequence (b's prefix rows, a, b's other rows); fwd "
        "(concat) and bwd (split)"
    )
    upstream = dataclasses.replace(
        UPSTREAM_FILE,
        functions=("triton_concat_2D_jagged", "triton_concat_2D_jagged_jagged",
                   "triton_concat_2D_dense_jagged", "_Concat2DJaggedFunction"),
        lines="651-1318",
    )  # fmt: skip
    upstream_function = "_Concat2DJaggedFunction"
    tensor_names = {"a": "values_a", "b": "values_b", "joined": "d_out"}
    input_names = (
        "values_a", "values_b", "offsets_a", "offsets_b", "d_out", "max_seq_len", "prefix",
        "rows_a", "rows_b",
    )  # fmt: skip
    output_names = ("out", "d_values_a", "d_values_b")
    kernels = (
        kernel("fwd", "join", ("out",)),
        kernel("bwd", "part", ("d_values_a", "d_values_b")),
    )

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        d_a, d_b = self._part(inputs["d_out"], inputs, compute_dtype)
        out = self._join(inputs["values_a"], inputs["values_b"], inputs, compute_dtype)
        return {"out": out, "d_values_a": d_a, "d_values_b": d_b}

    def launchers(self):
        def fwd(inputs: Tensors, config) -> Tensors:
            return {"out": self.port_concat(inputs["values_a"], inputs["values_b"], inputs, config)}

        def bwd(inputs: Tensors, config) -> Tensors:
            d_a, d_b = self.port_split(inputs["d_out"], inputs, config)
            return {"d_values_a": d_a, "d_values_b": d_b}

        return {"fwd": fwd, "bwd": bwd}

    def upstream_args(self, inputs: Tensors) -> tuple:
        """triton_concat_2D_jagged(max_seq_len, values_a, values_b, offsets_a, offsets_b,
        is_replace=False, n_prefix_from_right)."""
        max_seq_len, prefix, _, _ = self._sizes(inputs)
        return (max_seq_len, inputs["values_a"], inputs["values_b"], inputs["offsets_a"],
                inputs["offsets_b"], False, prefix)  # fmt: skip

    def upstream_grads(self, inputs: Tensors) -> tuple:
        return (inputs["d_out"],)

    def upstream_result(self, forward, backward) -> Tensors:
        return {"out": forward, "d_values_a": backward[1], "d_values_b": backward[2]}


SPEC = Concat2DJagged()
