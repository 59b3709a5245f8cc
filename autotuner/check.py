"""`autotune check`: has the frozen port got slower than its baseline?

For every (case, part) of an op with a "port_frozen" baseline on the soc (the newest one), the
port is timed again through its launchers exactly as `autotune baseline` timed it, and the new
single-call samples are compared with the baseline's stored samples. A regression needs both:

- the median slowed by more than the threshold, 5% by default (`AUTOTUNE_CHECK_THRESHOLD` or
  `--threshold`): the p20-p80 bands of the H200 baselines in docs/benchmarks.md are mostly within
  a few percent of their medians, so a smaller threshold would flag the machine's noise and a
  larger one would let real losses through;
- a one-sided Mann-Whitney U test saying the new samples tend to be larger, p < 0.01: a median
  beyond the threshold inside a band that wide is not evidence.

Each verdict is stored (CheckVerdict) with the ratio of the new median to the newest upstream GPU
baseline of the (case, part), where there is one. On `cpu` the times are interpreter times: they
are checked against interpreter baselines only, and never compared with a GPU.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from ops.spec import OpSpec
from storage import Baseline, CheckVerdict, Database

from .backends import Backend, Timing
from .baseline import FrozenSet, frozen_run, latest, measure_samples
from .case_store import find, kind_for
from .environment import environment
from .errors import UserError
from .stats import mann_whitney_less

#: Significance level of the one-sided test.
ALPHA = 0.01


@dataclass(frozen=True)
class Comparison:
    change: float  # median now / baseline median - 1
    p_value: float  # that the new samples tend to be larger
    regressed: bool


def compare(now: list[float], before: list[float], threshold: float) -> Comparison:
    """Slower by more than `threshold` and significantly so (one-sided Mann-Whitney, ALPHA)."""
    change = statistics.median(now) / statistics.median(before) - 1
    p_value = mann_whitney_less(before, now)
    return Comparison(change, p_value, change > threshold and p_value < ALPHA)


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive times (stored in UTC)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Checked:
    baseline: Baseline
    verdict: CheckVerdict

    def as_dict(self) -> dict[str, Any]:
        v = self.verdict
        return {
            "op": v.op,
            "soc": v.soc,
            "case": v.case_name,
            "part": v.part,
            "label": v.label,
            "interpreter": self.baseline.interpreter,  # interpreter times: never a performance claim
            "baseline_id": v.baseline_id,
            "baseline_ms": self.baseline.median_ms,
            "median_ms": v.median_ms,
            "p20_ms": v.p20_ms,
            "p80_ms": v.p80_ms,
            "n": v.n,
            "change": v.change,
            "p_value": v.p_value,
            "threshold": v.threshold,
            "regressed": v.regressed,
            "gpu_ratio": v.gpu_ratio,
            "checked_at": _utc(v.checked_at).isoformat(),
        }


@dataclass(frozen=True)
class CheckReport:
    checked: list[Checked]
    skipped: list[str]  # "case part: why" of baselines that could not be checked

    @property
    def regressed(self) -> bool:
        return any(c.verdict.regressed for c in self.checked)


def _baselines(db: Database, spec: OpSpec, soc: str) -> list[Baseline]:
    """The newest "port_frozen" baseline of every (case, part) on this soc."""
    with db.sessions() as session:
        pairs = session.execute(
            select(Baseline.case_name, Baseline.part)
            .where(Baseline.op == spec.name, Baseline.soc == soc, Baseline.source == "port_frozen")
            .distinct()
            .order_by(Baseline.case_name, Baseline.part)
        ).all()
        return [latest(session, spec.name, case, part, "port_frozen", soc) for case, part in pairs]


def _gpu_ratio(db: Database, row: Baseline, median_ms: float, backend: Backend) -> float | None:
    """New median / newest upstream GPU median of the (case, part); interpreter times never."""
    if backend.is_interpreter:
        return None
    with db.sessions() as session:
        gpu = latest(session, row.op, row.case_name, row.part, "upstream")
    return median_ms / gpu.median_ms if gpu and gpu.median_ms > 0 else None


def check(
    db: Database,
    spec: OpSpec,
    backend: Backend,
    threshold: float,
    cases: list[str] | None = None,
) -> CheckReport:
    """Re-time every baselined frozen (case, part), or those of the named cases, and store a
    verdict for each."""
    if not threshold >= 0:  # NaN too
        raise UserError(f"--threshold must be a share >= 0, e.g. 0.05; got {threshold}")
    baselines = [
        row for row in _baselines(db, spec, backend.soc) if cases is None or row.case_name in cases
    ]
    frozen = FrozenSet.read(spec, backend.soc)
    env = environment(backend)
    checked, skipped = [], []
    inputs_of: dict[str, dict] = {}
    for row in baselines:
        try:
            case = find(spec, row.case_name, kind_for(backend.is_interpreter), db)
        except ValueError:
            skipped.append(f"{row.case_name} {row.part}: no such case any more")
            continue
        if row.part not in spec.parts:
            skipped.append(f"{row.case_name} {row.part}: no such part any more")
            continue
        if case.name not in inputs_of:
            inputs_of[case.name] = spec.make_inputs(case, backend.device)
        run = frozen_run(spec, case, inputs_of[case.name], row.part, frozen)
        if run is None:
            skipped.append(f"{row.case_name} {row.part}: not frozen on {backend.soc} any more")
            continue
        samples = measure_samples(backend, run[1])
        timing = Timing.of(samples)
        outcome = compare(samples, row.samples, threshold)
        verdict = CheckVerdict(
            op=spec.name,
            soc=backend.soc,
            case_name=row.case_name,
            part=row.part,
            label=frozen.label,
            baseline_id=row.id,
            **timing.as_dict(),  # median_ms, p20_ms, p80_ms, n
            change=outcome.change,
            p_value=outcome.p_value,
            threshold=threshold,
            regressed=outcome.regressed,
            gpu_ratio=_gpu_ratio(db, row, timing.median_ms, backend),
            environment=env,
        )
        checked.append(Checked(row, verdict))
    if not checked:
        why = f" ({'; '.join(skipped)})" if skipped else ""
        raise UserError(
            f"nothing to check: no frozen {spec.name} baseline on {backend.soc}{why}; run "
            f"`autotune baseline --op {spec.name} --soc {backend.soc}` after "
            f"`autotune freeze --op {spec.name} --soc {backend.soc}`"
        )
    with db.sessions() as session:
        session.add_all([c.verdict for c in checked])
        session.commit()
        for c in checked:
            session.refresh(c.verdict)
        session.expunge_all()
    return CheckReport(checked, skipped)
