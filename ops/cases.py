"""An op's cases built from rows of shape values, and what a case says about its rows: its
offsets, its rows in all and those an op that truncates at max_seq_len uses."""

from __future__ import annotations

import torch

from .jagged import offsets_from_lengths, skewed_lengths
from .spec import Case, CaseKind, OpSpec


def standard_cases(
    spec: OpSpec, kind: CaseKind, accuracy_shapes: tuple, performance_shapes: tuple
) -> list[Case]:
    """An op's cases from rows of shape values in `spec.shape_keys` order: an accuracy row ends
    with its lengths (one case per dtype of the op), a performance row with its dtype (lengths
    from `skewed_lengths(B, max_seq_len)`)."""
    keys = spec.shape_keys
    if kind == "accuracy":
        return [
            spec.make_case(dict(zip(keys, values, strict=True)), dtype, lengths, kind)
            for *values, lengths in accuracy_shapes
            for dtype in spec.dtypes
        ]
    cases = []
    for *values, dtype in performance_shapes:
        shape = dict(zip(keys, values, strict=True))
        lengths = skewed_lengths(shape["B"], shape["max_seq_len"])
        cases.append(spec.make_case(shape, dtype, lengths, kind))
    return cases


def case_offsets(case: Case, device: torch.device) -> torch.Tensor:
    """The case's offsets: user-given ones verbatim (even invalid), else from its lengths."""
    if case.offsets is not None:
        return torch.tensor(case.offsets, dtype=torch.int64, device=device)
    return offsets_from_lengths(case.lengths, device)


# -- traffic models (OpSpec.traffic) ----------------------------------------------------------
#: Bytes of an fp32 element (lse, delta and the fp32 output a backward part is given).
FP32 = 4


def total_rows(case: Case) -> int:
    """Rows of the case's jagged tensor: all of them, truncated or not."""
    if case.offsets is not None:
        return max(0, case.offsets[-1])
    return sum(case.lengths)


def effective_lengths(case: Case) -> list[int]:
    """Per sequence, the rows an op that truncates at max_seq_len uses: min(length, max_seq_len)."""
    n = case.shape["max_seq_len"]
    return [min(max(length, 0), n) for length in case.lengths]
