"""Verify's verdicts into the database: one `AccuracyResult` row per output of a case."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any

from storage import AccuracyResult, Database

from ..backends import Backend
from ..measure.accuracy import Errors, ratio
from ..measure.environment import environment
from .verify import CaseResult, Row


def _json_safe(value: Any) -> Any:
    """Non-finite numbers as None: PostgreSQL's JSON cannot hold them (`finite` says why)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    return value


def metrics(row: Row) -> dict[str, Any]:
    """The port's errors, the second reference's and their ratios (MARE, MERE, RMSE)."""
    port, second = row.port, row.second
    ratios = None
    if second is not None:
        ratios = {
            name: ratio(getattr(port, name), getattr(second, name))
            for name in ("mare", "mere", "rmse")
        }
    return _json_safe(
        {
            "port": asdict(port),
            "second": asdict(second) if isinstance(second, Errors) else None,
            "ratios": ratios,
        }
    )


class AccuracyStore:
    """Adds each case's rows as it comes, in one transaction per case."""

    def __init__(self, db: Database, backend: Backend, level: str) -> None:
        self.db = db
        self.soc = backend.soc
        self.level = level
        self.toolchain = environment(backend)
        self.count = 0

    def add(self, result: CaseResult) -> None:
        case = result.case
        described = {"shape": case.shape, "dtype": case.dtype, "kind": case.kind}
        if case.offsets is not None:
            described["offsets"] = list(case.offsets)
        rows = [
            AccuracyResult(
                op=result.op,
                soc=self.soc,
                case_name=case.name,
                case=described,
                output=row.output,
                configs=result.configs,
                metrics=metrics(row),
                reference=row.second_name if row.second is not None else "none",
                reference_from=row.second_from,
                level=self.level,
                passed=row.verdict.passed,
                mode=row.verdict.mode,
                reason=row.verdict.reason[:1000],
                toolchain=self.toolchain,
            )
            for row in result.rows
        ]
        with self.db.sessions() as session:
            session.add_all(rows)
            session.commit()
        self.count += len(rows)
