"""`autotune check`: has the frozen port got slower than its baseline?

For every (case, part) of an op with a "port_frozen" baseline on the soc (the newest one), the
frozen port is timed again, interleaved with the references that did not change and that
`autotune baseline` measured beside it: upstream at its defaults on the same device and the port
at upstream's default configs (where upstream cannot run the case, that one alone). The verdict
judges the ratio of the frozen port to the reference closest to it in duration now against the
same ratio at baseline time, so clocks and machine drift, which move both alike, cancel. A second
process sharing the device does not move long and short kernels alike: when references of
dissimilar durations moved apart (`autotuner.measure.contention`), the (case, part) is
`contended` rather than "ok", and a regression judged against a reference of dissimilar duration
is `contended` too. Contention is also seen rather than inferred (`autotuner.measure.device_load`):
a calibration probe near the part's duration that moved beyond noise during the part's
measurement or since its baseline, or another process the device lists as computing, makes the
part `contended` unless its ratio grew beyond the threshold plus what the load moved the probe.
Upstream runs at the configs its `triton.autotune` picked at baseline time (`upstream_picks`),
its autotune bypassed; where it cannot or picks otherwise it is left out, and the check says so.
A regression needs both:

- the ratio grew by more than the threshold, 5% by default (`AUTOTUNE_CHECK_THRESHOLD` or
  `--threshold`): the p20-p80 bands of the H200 baselines in docs/benchmarks.md are mostly within
  a few percent of their medians, so a smaller threshold would flag the machine's noise and a
  larger one would let real losses through;
- a one-sided Mann-Whitney U test on the samples divided by their reference's median saying the
  new ones tend to be larger, p < 0.01.

A suspect is measured again in a second, independent interleaved round and reported only if that
round finds it too. The absolute change of the frozen port's median is kept as information.
Each verdict is stored (CheckVerdict) with the ratio of the new median to the GPU baseline of the
(case, part), where there is one. On `cpu` the times are interpreter times: they are checked
against interpreter baselines only, and never compared with a GPU.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select

from core.errors import UserError
from core.paths import performance_json
from ops.spec import OpSpec
from storage import Baseline, CheckVerdict, Database

from ..atk.performance_json import frozen_sections
from ..atk.performance_json import read as read_performance_json
from ..backends import Backend, Timing
from ..cases.store import find, kind_for
from ..measure.contention import Reference, closest, contention, similar
from ..measure.device_load import Seen, Watch, probes
from ..measure.environment import environment
from ..measure.stats import mann_whitney_less
from ..measure.toolchain import Stale, differences, stale_configs, toolchain
from . import upstream_picks
from .baseline import (
    FrozenSet,
    chosen_gpu_soc,
    frozen_run,
    gpu_baseline,
    latest,
    measure_interleaved,
    newest,
    no_host_reads,
)

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


def compare_relative(
    now: list[float],
    reference_now: list[float],
    before: list[float],
    reference_before: list[float],
    threshold: float,
) -> Comparison:
    """`compare` of the samples divided by their reference's median: drift cancels."""
    scale_now, scale_before = statistics.median(reference_now), statistics.median(reference_before)
    return compare([x / scale_now for x in now], [x / scale_before for x in before], threshold)


#: The unchanged references a frozen baseline is measured beside.
REFERENCE_SOURCES = ("upstream", "port_default")
#: Durations within this factor are similar: contention moves them alike (`measure.contention`).
SIMILAR = 2.0


@dataclass(frozen=True)
class Checked:
    baseline: Baseline
    verdict: CheckVerdict
    #: How the toolchain the frozen configs were tuned under differs from this one's (empty:
    #: the same); a config tuned under another one is stale.
    toolchain_changes: tuple[str, ...] = ()
    #: Why a reference measured at baseline time was left out of the judgement (upstream's
    #: autotune picks otherwise than it recorded).
    notes: tuple[str, ...] = ()

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
            "outcome": v.outcome,
            "contention": v.contention,
            "stale_toolchain": list(self.toolchain_changes),
            "notes": list(self.notes),
            "gpu_ratio": v.gpu_ratio,
            "reference": v.reference_source,
            "reference_ms": v.reference_ms,
            "absolute_change": v.absolute_change,
            "rounds": v.rounds,
            "device_load": v.device_load,
            "checked_at": v.checked_at.isoformat(),
        }


@dataclass(frozen=True)
class CheckReport:
    checked: list[Checked]
    skipped: list[str]  # "case part: why" of baselines that could not be checked
    stale: list[Stale] = field(default_factory=list)  # the op's stale configs on this soc

    @property
    def regressed(self) -> bool:
        return any(c.verdict.regressed for c in self.checked)

    @property
    def contended(self) -> bool:
        return any(c.verdict.outcome == "contended" for c in self.checked)


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


def _references(db: Database, row: Baseline) -> list[Baseline]:
    """The references measured in the same `autotune baseline` as the frozen row: the newest
    upstream and port_default rows of its (case, part) and soc not newer than it."""
    with db.sessions() as session:
        found = [
            newest(
                session,
                row.op,
                row.case_name,
                row.part,
                source,
                Baseline.soc == row.soc,
                Baseline.measured_at <= row.measured_at,
            )  # fmt: skip
            for source in REFERENCE_SOURCES
        ]
    return [f for f in found if f is not None]


def _toolchain_changes(spec: OpSpec, row: Baseline, soc: str, backend: Backend) -> tuple[str, ...]:
    """Why the part's frozen configs are stale here: how the toolchains they were tuned under
    (performance json) differ from this backend's and the port's now."""
    sections = frozen_sections(read_performance_json(performance_json(spec.name)))
    kernels = sections.get(row.case_name, {}).get(soc, {}).get("kernels", {})
    changes: list[str] = []
    for kernel in spec.parts.get(row.part, ()):
        if kernel in kernels:
            current = toolchain(backend, spec.name, spec.kernel(kernel).port_kernel)
            found = differences(kernels[kernel].get("toolchain"), current)
            changes += [f"{kernel}: {change}" for change in found]
    return tuple(changes)


def _gpu_ratio(
    db: Database, row: Baseline, median_ms: float, backend: Backend, gpu_soc: str | None
) -> float | None:
    """New median / the GPU baseline's median of the (case, part); interpreter times never."""
    if backend.is_interpreter:
        return None
    with db.sessions() as session:
        gpu = gpu_baseline(session, row.op, row.case_name, row.part, gpu_soc)
    return median_ms / gpu.median_ms if gpu and gpu.median_ms > 0 else None


def _reference_call(
    spec: OpSpec, reference: Baseline, inputs: dict, case
) -> Callable[[], object] | None:
    """The call that re-measures a reference now; None where upstream cannot run the case."""
    if reference.source == "upstream":
        return spec.upstream_part(reference.part, inputs, case)
    return spec.port_part(reference.part, inputs, reference.configs)


def _hold_upstream_still(
    spec: OpSpec, references: list[tuple[Baseline, Callable[[], object]]], held: ExitStack
) -> list[str]:
    """Hold upstream's autotuned kernels to the picks its baseline recorded for as long as `held`
    lasts, and check that its call launches at them (`upstream_picks`); where it cannot or does
    not, upstream is taken out of `references` and the note says why."""
    upstream = next((pair for pair in references if pair[0].source == "upstream"), None)
    if upstream is None:
        return []
    reference, call = upstream
    modules = upstream_picks.modules_of(spec)
    recorded = reference.configs or {}
    try:
        held.enter_context(upstream_picks.pinned(modules, recorded))
        now = upstream_picks.record(modules, call)
    except upstream_picks.PickGone as exc:
        references.remove(upstream)
        return [f"upstream not compared: {exc}"]
    if now == recorded:
        return []
    references.remove(upstream)
    return [
        f"upstream not compared: it picks {upstream_picks.describe(now)} where its baseline "
        f"recorded {upstream_picks.describe(recorded) or 'no autotuned config'}"
    ]


@dataclass(frozen=True)
class Judged:
    outcome: str  # "ok", "regressed" or "contended"
    contention: str | None  # why the device looked shared
    comparison: Comparison  # against `reference`, the one closest in duration to the part
    reference: Baseline
    reference_now: list[float]
    samples: list[float]
    rounds: int
    seen: Seen  # what the calibration probes and the device showed around the measurement


def _judge(
    backend: Backend,
    row: Baseline,
    references: list[tuple[Baseline, Callable[[], object]]],
    frozen_call: Callable[[], object],
    threshold: float,
    noise: float,
    watch: Watch,
) -> Judged:
    """Time the frozen part interleaved with its references and judge it against the reference
    closest in duration; a suspect is confirmed by a second, independent round. On a shared
    device a regression is reported where the reference is similar in duration, or where the
    part is the shorter one and its own median also grew beyond the threshold (contention slows
    the longer kernels more, so the reference's drift overstates what the part saw: issue 27's
    co-load slowed 4-18 ms references 1.6x and 0.15-0.98 ms parts by under 1%); else it is
    `contended`."""
    near = closest([ref.median_ms for ref, _ in references], row.median_ms)
    reference = references[near][0]
    rounds = 0
    watch.start()
    while True:
        rounds += 1
        *references_now, samples = measure_interleaved(
            backend, [call for _, call in references] + [frozen_call]
        )
        comparison = compare_relative(
            samples, references_now[near], row.samples, reference.samples, threshold
        )
        if not comparison.regressed or rounds == 2:
            break
    at_baseline = ((row.device_load or {}).get("calibration") or {}).get("after")
    seen = watch.stop([row.median_ms, reference.median_ms], at_baseline, noise)
    moved = [
        Reference(ref.source, ref.median_ms, statistics.median(now))
        for (ref, _), now in zip(references, references_now, strict=True)
    ]
    # The interpreter shares its host with everything: its times are never a performance claim.
    drifted = None if backend.is_interpreter else contention(moved, row.median_ms, noise, SIMILAR)
    why = "; ".join(reason for reason in (drifted, seen.why) if reason) or None
    own = statistics.median(samples) / row.median_ms - 1
    trusted = similar(reference.median_ms, row.median_ms, SIMILAR) or (
        row.median_ms < reference.median_ms and own > threshold
    )
    # Seen contention: a regression only where the ratio grew beyond what the load moved the
    # probe nearest the part.
    beyond_load = comparison.change > threshold + seen.movement
    if comparison.regressed and (why is None or (trusted and beyond_load)):
        outcome = "regressed"
    else:
        outcome = "ok" if why is None else "contended"
    return Judged(outcome, why, comparison, reference, references_now[near], samples, rounds, seen)


def check(
    db: Database,
    spec: OpSpec,
    backend: Backend,
    threshold: float,
    cases: list[str] | None = None,
    gpu_soc: str | None = None,
    noise: float | None = None,
) -> CheckReport:
    """Re-time every baselined frozen (case, part), or those of the named cases, beside its
    reference, and store a verdict for each."""
    if not threshold >= 0:  # NaN too
        raise UserError(f"--threshold must be a share >= 0, e.g. 0.05; got {threshold}")
    gpu_soc = chosen_gpu_soc(db, gpu_soc)
    if noise is None:
        from ..settings import settings

        noise = settings().check_contention_noise
    baselines = [
        row for row in _baselines(db, spec, backend.soc) if cases is None or row.case_name in cases
    ]
    frozen = FrozenSet.read(spec, backend.soc)
    env = environment(backend)
    watch = Watch(backend, probes(backend))
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
        inputs = inputs_of[case.name]
        references = [
            (ref, call)
            for ref in _references(db, row)
            if (call := _reference_call(spec, ref, inputs, case)) is not None
        ]
        with ExitStack() as held:
            notes = _hold_upstream_still(spec, references, held)
            if not references:
                skipped.append(
                    f"{row.case_name} {row.part}: no upstream or port_default baseline measured "
                    "with the frozen one that can run here to judge it against"
                    + "".join(f" ({note})" for note in notes)
                    + "; run `autotune baseline` again"
                )
                continue
            what = f"{spec.name} {row.part}"
            for ref, call in references:
                no_host_reads(call, inputs, f"{what} {ref.source}")
            no_host_reads(run[1], inputs, f"{what} port_frozen")
            judged = _judge(backend, row, references, run[1], threshold, noise, watch)
        reference, reference_now, samples = judged.reference, judged.reference_now, judged.samples
        outcome, rounds = judged.comparison, judged.rounds
        timing = Timing.of(samples)
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
            regressed=judged.outcome == "regressed",
            outcome=judged.outcome,
            contention=judged.contention,
            gpu_ratio=_gpu_ratio(db, row, timing.median_ms, backend, gpu_soc),
            reference_source=reference.source,
            reference_ms=statistics.median(reference_now),
            absolute_change=timing.median_ms / row.median_ms - 1,
            rounds=rounds,
            environment=env,
            device_load=judged.seen.record if watch.kernels else None,
        )
        changes = _toolchain_changes(spec, row, backend.soc, backend)
        checked.append(Checked(row, verdict, changes, tuple(notes)))
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
    return CheckReport(checked, skipped, stale_configs(spec, backend.versions(), backend.soc))
