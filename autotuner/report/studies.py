"""Per-study summaries from our tables and Optuna's, for `run`, `status` and the dashboard."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import TrialState
from sqlalchemy import select

from storage import Database, StudyRecord, optuna_storage

from ..search.verdict import Verdict
from ..vocabulary import Failure
from .outcomes import outcome, speedup


@dataclass
class StudySummary:
    name: str
    op: str
    kernel: str
    case: str
    soc: str
    strategy: str
    budget: int
    feasible: int
    complete: int = 0
    failures: Counter = field(default_factory=Counter)
    infeasible: int = 0
    #: Failures of category "ub_overflow" of configs the static model passed (every config but
    #: the default, which is measured whatever the model says): each one is a miss of the
    #: unified-buffer model.
    ub_misses: int = 0
    #: Why the default's trial failed, "category: message" (the default is upstream's own launch:
    #: its failure is a fault of the port or of the tool, not a slow config).
    default_failure: str | None = None
    default_ms: float | None = None
    best_ms: float | None = None
    best_config: dict[str, Any] | None = None
    verdict: Verdict | None = None
    #: A newer study of the same kernel source ran under another toolchain: this one's numbers
    #: (and a config frozen from it) are stale.
    stale: bool = False

    @property
    def best_speedup(self) -> float | None:
        return speedup(self.default_ms, self.best_ms)


def summarize(db: Database, *, op: str | None = None, soc: str | None = None) -> list[StudySummary]:
    query = select(StudyRecord).order_by(StudyRecord.op, StudyRecord.case_name, StudyRecord.kernel)
    if op:
        query = query.where(StudyRecord.op == op)
    if soc:
        query = query.where(StudyRecord.soc == soc)
    with db.sessions() as session:
        records = list(session.scalars(query))
    storage = optuna_storage(db) if records else None
    newest: dict[tuple, StudyRecord] = {}
    for record in records:
        key = (record.op, record.kernel, record.case_name, record.soc, record.source_hash)
        if key not in newest or (record.created_at, record.id) > (
            newest[key].created_at,
            newest[key].id,
        ):
            newest[key] = record
    out = []
    for record in records:
        latest = newest[
            (record.op, record.kernel, record.case_name, record.soc, record.source_hash)
        ]
        summary = StudySummary(
            record.name,
            record.op,
            record.kernel,
            record.case_name,
            record.soc,
            record.strategy,
            record.budget,
            record.feasible_size,
            verdict=Verdict.of(record.verdict),
            stale=latest.id != record.id and latest.toolchain != record.toolchain,
        )
        for trial in optuna.load_study(study_name=record.name, storage=storage).get_trials(
            deepcopy=False
        ):
            if trial.state == TrialState.COMPLETE:
                summary.complete += 1
                if trial.user_attrs.get("config") == record.default_config:
                    summary.default_ms = trial.value
                if summary.best_ms is None or trial.value < summary.best_ms:
                    summary.best_ms, summary.best_config = (
                        trial.value,
                        trial.user_attrs.get("config"),
                    )
            elif trial.state == TrialState.FAIL:
                category = outcome(trial.state.name, trial.user_attrs.get("category"))
                if category == Failure.INFEASIBLE:
                    summary.infeasible += 1
                else:
                    summary.failures[category] += 1
                # A Ctrl-C abandons the trial it stopped: no fault of the default's.
                if (
                    trial.user_attrs.get("config") == record.default_config
                    and category != Failure.INTERRUPTED
                ):
                    summary.default_failure = f"{category}: {trial.user_attrs.get('message', '')}"
                if category == Failure.UB_OVERFLOW and "static_violation" not in trial.user_attrs:
                    summary.ub_misses += 1
        if summary.default_ms is not None:  # measured after all (a re-run resumed it)
            summary.default_failure = None
        out.append(summary)
    return out
