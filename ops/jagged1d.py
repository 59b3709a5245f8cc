"""What the ops on 1-D jagged tensors (one value a row: FBGEMM SLL's dense_jagged_cat_jagged_out
and jagged_self_substraction_jagged_out) share: shapes (B, max_seq_len), cases from each op's
tables, seeded inputs."""

from __future__ import annotations

import zlib

import torch

from .cases import standard_cases
from .spec import SHORT_DTYPE, Case, CaseKind, OpSpec


class Jagged1dOp(OpSpec):
    """An op over 1-D jagged values; subclasses give `accuracy_shapes` ((B, max_seq_len,
    lengths) rows) and `performance_shapes` ((B, max_seq_len, dtype) rows)."""

    shape_keys = ("B", "max_seq_len")
    accuracy_shapes: tuple[tuple, ...]
    performance_shapes: tuple[tuple, ...]

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, self.accuracy_shapes, self.performance_shapes)

    def generator(self, case: Case, seed: int) -> torch.Generator:
        return torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
