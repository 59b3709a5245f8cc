"""Ops over dense rows (no offsets): their cases are shapes named by their keys, N rows first,
made from each op's tables of accuracy shapes (every dtype) and performance shapes (one dtype
each)."""

from __future__ import annotations

from .spec import SHORT_DTYPE, Case, CaseKind, OpSpec, canonical_dtype


class DenseRowsOp(OpSpec):
    """An op whose cases are dense shapes: `shape_keys` ("N" first), `accuracy_shapes` (values in
    key order) and `performance_shapes` (values in key order, then the dtype)."""

    accuracy_shapes: tuple[tuple[int, ...], ...]
    performance_shapes: tuple[tuple[int | str, ...], ...]
    jagged = False

    def make_case(self, shape, dtype, lengths=(), kind="accuracy", offsets=None) -> Case:
        keys = "_".join(f"{k.lower()}{shape[k]}" for k in self.shape_keys)
        return Case(
            self.name, f"{keys}_{SHORT_DTYPE[dtype]}", {k: shape[k] for k in self.shape_keys},
            dtype, (), kind,
        )  # fmt: skip

    def cases(self, kind: CaseKind) -> list[Case]:
        if kind == "accuracy":
            return [
                self.make_case(dict(zip(self.shape_keys, values, strict=True)), dtype)
                for values in self.accuracy_shapes
                for dtype in self.dtypes
            ]
        return [
            self.make_case(
                dict(zip(self.shape_keys, values[:-1], strict=True)), values[-1], (), kind
            )
            for values in self.performance_shapes
        ]

    def case_from_shape(self, shape: dict[str, int], dtype: str, offsets: list[int] | None) -> Case:
        if offsets:
            raise ValueError(f"{self.name} takes dense rows: no --offsets")
        rest = self.shape_keys[1:]
        if (
            sorted(shape) != sorted(self.shape_keys)
            or shape["N"] < 0
            or any(shape[k] < 1 for k in rest)
        ):
            bounds = ", ".join(["N >= 0", *(f"{k} >= 1" for k in rest)])
            raise ValueError(f"{self.name} shapes take exactly {bounds}")
        return self.make_case(shape, canonical_dtype(dtype))

    def jagged_rows(self, case: Case) -> int:
        return case.shape["N"]
