"""split_2d_jagged (recsys-examples' Triton `triton_split_2D_jagged`): a 2-D jagged tensor cut
sequence by sequence into a and b, b's first `prefix` rows, then a's rows, then b's others (the
inverse of concat_2d_jagged); forward (the split kernel) and backward (the concat kernel, as
upstream's `_Split2DJaggedFunction`).

The cases run upstream's jagged form with the row counts of a and b given (as HSTU's callers
give them, `seq_len_a` and `seq_len_b`: no read of the offsets on the host); the dense forms
(a or b dense [B, dense_size, D]) are the same two kernels with other constexprs, tested in
tests/test_split_2d_jagged.py.
"""

from __future__ import annotations

import dataclasses

import torch

from .concat_split import UPSTREAM_FILE, ConcatSplitOp, kernel
from .spec import Tensors

NAME = "split_2d_jagged"


class Split2DJagged(ConcatSplitOp):
    name = NAME
    summary = (
        "Cut a 2-D jagged tensor per sequence into a and b (b's prefix rows, a, b's other rows); "
        "fwd (split) and bwd (concat)"
    )
    upstream = dataclasses.replace(
        UPSTREAM_FILE, functions=("triton_split_2D_jagged", "_Split2DJaggedFunction"),
        lines="651-1349",
    )  # fmt: skip
    upstream_function = "_Split2DJaggedFunction"
    tensor_names = {"joined": "values", "a": "d_values_a", "b": "d_values_b"}
    input_names = (
        "values", "offsets_a", "offsets_b", "d_values_a", "d_values_b", "max_seq_len", "prefix",
        "rows_a", "rows_b",
    )  # fmt: skip
    output_names = ("values_a", "values_b", "d_values")
    kernels = (
        kernel("fwd", "part", ("values_a", "values_b")),
        kernel("bwd", "join", ("d_values",)),
    )

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        a, b = self._part(inputs["values"], inputs, compute_dtype)
        d_values = self._join(inputs["d_values_a"], inputs["d_values_b"], inputs, compute_dtype)
        return {"values_a": a, "values_b": b, "d_values": d_values}

    def launchers(self):
        def fwd(inputs: Tensors, config) -> Tensors:
            a, b = self.port_split(inputs["values"], inputs, config)
            return {"values_a": a, "values_b": b}

        def bwd(inputs: Tensors, config) -> Tensors:
            d_a, d_b = inputs["d_values_a"], inputs["d_values_b"]
            return {"d_values": self.port_concat(d_a, d_b, inputs, config)}

        return {"fwd": fwd, "bwd": bwd}

    def upstream_args(self, inputs: Tensors) -> tuple:
        """triton_split_2D_jagged(values, max_seq_len, offsets_a, offsets_b, dense_size=0,
        n_prefix_to_right, seq_len_a, seq_len_b)."""
        max_seq_len, prefix, rows_a, rows_b = self._sizes(inputs)
        return (inputs["values"], max_seq_len, inputs["offsets_a"], inputs["offsets_b"], 0,
                prefix, rows_a, rows_b)  # fmt: skip

    def upstream_grads(self, inputs: Tensors) -> tuple:
        return inputs["d_values_a"], inputs["d_values_b"]

    def upstream_result(self, forward, backward) -> Tensors:
        return {"values_a": forward[0], "values_b": forward[1], "d_values": backward[0]}


SPEC = Split2DJagged()
