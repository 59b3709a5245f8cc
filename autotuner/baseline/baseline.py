"""`autotune baseline`: the times each case of an op is judged against.

Per case and part of the op (its forward, its backward, ...): upstream's kernels at their
defaults (on a GPU this is the GPU baseline an NPU port is compared with; where upstream tunes
itself with `triton.autotune`, the configs it picked are stored with the row, `upstream_picks`,
and `autotune check` launches it at them), upstream's TMA path where it has one and the device
runs it (`OpSpec.upstream_tma_part`: its own autotune pick, recorded and pinned alike; no
`autotune check` reference), torch eager in the case dtype (what a user runs
without the port, on any device: `OpSpec.torch_part`), the port at upstream's default configs,
and the port at the configs frozen for this soc (what `autotune check` compares later runs
with). On `cpu` the numbers are interpreter times, stored and shown as such.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sqlalchemy import select

from core.errors import UserError
from core.paths import frozen_configs_file
from core.socs import BackendKind, socs_of
from ops.spec import Case, Config, OpSpec
from storage import Baseline, Database

from ..atk.store import FrozenStore
from ..backends import Backend, Timing
from ..cases.store import kind_for, user_cases
from ..measure.device_load import Watch, probes
from ..measure.environment import environment
from ..measure.host_sync import host_reads, host_scalars
from . import upstream_picks

SOURCES = ("upstream", "upstream_tma", "torch", "port_default", "port_frozen")
#: The sources that run upstream's kernels, each at the pick of upstream's autotune it recorded.
UPSTREAM_SOURCES = ("upstream", "upstream_tma")
#: Timed calls per measurement (more for short parts, until they add up to MIN_MS), taken in
#: ROUNDS rounds that alternate between the sources of a part, so that drift of the device (clocks,
#: temperature) shows in all of them alike rather than in their ratio.
REPS, MIN_MS, ROUNDS = 50, 50.0, 5
#: On an interpreter soc, whose times are no performance (there baseline and check are only
#: exercised), 2 rounds of 5 calls.
INTERPRETER_REPS, INTERPRETER_ROUNDS = 10, 2


def sampling(backend: Backend) -> tuple[int, int, float]:
    """(rounds, calls per round, least ms per round) of a measurement on this backend."""
    if backend.is_interpreter:
        return INTERPRETER_ROUNDS, INTERPRETER_REPS // INTERPRETER_ROUNDS, 0.0
    return ROUNDS, REPS // ROUNDS, MIN_MS / ROUNDS


def no_host_reads(
    call: Callable[[], object], inputs: dict, what: str, warm: bool = True
) -> Callable[[], object]:
    """`call`, after checking that it never waits for the device (`autotuner.measure.host_sync`;
    `warm` False where it has run once already)."""
    reads = host_reads(call, host_scalars(inputs), warm=warm)
    if reads:
        raise UserError(
            f"{what} reads device values on the host inside the timed call "
            f"({', '.join(sorted(set(reads))[:3])}): that work belongs in its preparation"
        )
    return call


#: Rounds a measurement takes at least before it may stop on a tight spread.
MIN_ROUNDS = 3


def settled(round_medians: list[float], spread: float) -> bool:
    """The medians of a call's rounds lie within `spread` (a share of their median) of each
    other."""
    middle = statistics.median(round_medians)
    return middle > 0 and (max(round_medians) - min(round_medians)) / middle <= spread


def measure_interleaved(
    backend: Backend, calls: list[Callable[[], object]], spread: float | None = None
) -> list[list[float]]:
    """Single-call times (ms) of each call, in rounds that alternate between the calls; with
    `spread`, the rounds stop (after MIN_ROUNDS) once every call's round medians are `settled`."""
    for call in calls:
        call()  # compile, outside the timing
    backend.synchronize()
    samples: list[list[float]] = [[] for _ in calls]
    medians: list[list[float]] = [[] for _ in calls]
    rounds, reps, min_ms = sampling(backend)
    for done in range(1, rounds + 1):
        for out, of_rounds, call in zip(samples, medians, calls, strict=True):
            got = backend.samples(call, reps, warmup=2, min_ms=min_ms)
            out += got
            of_rounds.append(statistics.median(got))
        if spread is not None and done >= MIN_ROUNDS and all(settled(m, spread) for m in medians):
            break
    return samples


def measure_samples(backend: Backend, call: Callable[[], object]) -> list[float]:
    return measure_interleaved(backend, [call])[0]


def cases_for(spec: OpSpec, backend: Backend, db: Database | None = None) -> list[Case]:
    """The built-in cases of the backend's kind, then the user cases frozen on its soc."""
    kind = kind_for(backend.is_interpreter)
    frozen = FrozenSet.read(spec, backend.soc).by_kernel.values()
    names = {entry["case"] for entries in frozen for entry in entries}
    user = [case for case, _ in user_cases(spec, kind, db) if case.name in names]
    return [*spec.cases(kind), *user]


@dataclass(frozen=True)
class FrozenSet:
    """The configs frozen for one soc (`FrozenStore`), and the label of the soc's last freeze
    (`frozen_configs/<soc>/<op>.json`)."""

    label: str | None
    by_kernel: dict[str, list[dict]]

    @classmethod
    def read(cls, spec: OpSpec, soc: str) -> FrozenSet:
        frozen = FrozenStore.read(spec.name).block().get(soc, {})
        label_file = frozen_configs_file(soc, spec.name)
        label = None
        if label_file.exists():
            try:
                label = json.loads(label_file.read_text(encoding="utf-8")).get("label")
            except json.JSONDecodeError as exc:
                raise UserError(f"{label_file} is not valid JSON: {exc}") from exc
        return cls(label, frozen)

    def configs(self, case: Case, kernels: tuple[str, ...]) -> dict[str, Config] | None:
        """The frozen config of every kernel of a part for exactly this case; None if any lacks one."""
        found = {}
        for kernel in kernels:
            entry = next(
                (e for e in self.by_kernel.get(kernel, []) if e["case"] == case.name), None
            )
            if entry is None:
                return None
            found[kernel] = entry["config"]
        return found


def frozen_run(
    spec: OpSpec, case: Case, inputs: dict, part: str, frozen: FrozenSet
) -> tuple[dict[str, Config], Callable[[], object]] | None:
    """(configs, call) of the port at its frozen configs; None unless this case has them all."""
    configs = frozen.configs(case, spec.parts[part])
    if configs is None:
        return None
    return configs, spec.port_part(part, inputs, None)  # the launchers pick them themselves


def runs(
    spec: OpSpec, case: Case, inputs: dict, part: str, frozen: FrozenSet
) -> Iterator[tuple[str, dict[str, Config], Callable[[], object] | None]]:
    """(source, configs, call) of one part; call None where that source cannot run the case."""
    kernels = spec.parts[part]
    yield "upstream", {}, spec.upstream_part(part, inputs, case)
    yield "upstream_tma", {}, spec.upstream_tma_part(part, inputs, case)
    yield "torch", {}, spec.torch_part(part, inputs)
    defaults = {k: spec.kernel(k).default(case) for k in kernels}
    yield "port_default", defaults, spec.port_part(part, inputs, defaults)
    port_frozen = frozen_run(spec, case, inputs, part, frozen)
    if port_frozen is not None:
        yield "port_frozen", *port_frozen


@dataclass
class Profile:
    """Seconds a baseline spent per phase (`autotune baseline --profile`)."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextmanager
    def phase(self, name: str, backend: Backend) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            backend.synchronize()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start


def record_baselines(
    db: Database,
    spec: OpSpec,
    backend: Backend,
    cases: list[Case] | None = None,
    on_row: Callable[[Baseline], None] | None = None,
    profile: Profile | None = None,
) -> list[Baseline]:
    """Measure and store every (case, part, source) that can run on this backend."""
    from ..settings import settings

    profile = profile or Profile()
    frozen = FrozenSet.read(spec, backend.soc)
    env = environment(backend)
    watch = Watch(backend, probes(backend))
    with profile.phase("calibration", backend):
        watch.start()
    rows = []
    for case in cases_for(spec, backend, db) if cases is None else cases:
        with profile.phase("inputs", backend):
            inputs = spec.make_inputs(case, backend.device)
        for part in spec.parts:
            with profile.phase("inputs", backend):  # what a part needs of earlier parts
                runnable = [
                    (source, configs, call)
                    for source, configs, call in runs(spec, case, inputs, part, frozen)
                    if call is not None
                ]
            upstreams = {s: c for s, _, c in runnable if s in UPSTREAM_SOURCES}
            modules = upstream_picks.modules_of(spec) if upstreams else []
            with profile.phase("upstream's autotune and first call", backend):
                picks = {
                    s: upstream_picks.record(modules, c, fresh=s != "upstream")
                    for s, c in upstreams.items()
                }
            # The pick timed is the pick stored: each upstream source held to its own.
            runnable = [
                (s, configs, upstream_picks.pin(modules, picks[s], c) if s in picks else c)
                for s, configs, c in runnable
            ]
            with profile.phase("first calls (compiles)", backend):
                for source, _, call in runnable:
                    if source not in picks:
                        call()
            with profile.phase("host-read checks", backend):
                for source, _, call in runnable:
                    no_host_reads(call, inputs, f"{spec.name} {part} {source}", warm=False)
            with profile.phase("timed rounds", backend):
                calls = [call for _, _, call in runnable]
                measured = measure_interleaved(backend, calls, settings().baseline_round_spread)
            for (source, configs, _), samples in zip(runnable, measured, strict=True):
                timing = Timing.of(samples)
                if source in picks:
                    configs = picks[source]
                row = Baseline(
                    op=spec.name,
                    soc=backend.soc,
                    case_name=case.name,
                    part=part,
                    source=source,
                    label=frozen.label if source == "port_frozen" else None,
                    configs=configs,
                    **timing.as_dict(),  # median_ms, p20_ms, p80_ms, n
                    samples=samples,
                    interpreter=backend.is_interpreter,
                    backend=backend.kind,
                    environment=env,
                )
                rows.append(row)
                if on_row:
                    on_row(row)
    if watch.kernels:  # every probe: the calibration a check compares with, and a shared device
        with profile.phase("calibration", backend):
            seen = watch.stop(list(watch.before.values()), None, settings().check_contention_noise)
        for row in rows:
            row.device_load = seen.record
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
        for row in rows:
            session.refresh(row)
        session.expunge_all()
    return rows


def newest(session, op: str, case: str, part: str, source: str, *where) -> Baseline | None:
    """The newest baseline of one (case, part, source) that meets the `where` conditions."""
    query = select(Baseline).where(
        Baseline.op == op,
        Baseline.case_name == case,
        Baseline.part == part,
        Baseline.source == source,
        *where,
    )
    return session.scalars(query.order_by(Baseline.measured_at.desc(), Baseline.id.desc())).first()


def latest(session, op: str, case: str, part: str, source: str, soc: str) -> Baseline | None:
    """The newest baseline of one (case, part, source) on one soc."""
    return newest(session, op, case, part, source, Baseline.soc == soc)


def gpu_baseline(session, op: str, case: str, part: str, gpu_soc: str | None) -> Baseline | None:
    """The GPU baseline of one (case, part): upstream measured on a GPU (never upstream on an NPU,
    never the interpreter), the newest of `gpu_soc` when one is named, else the newest of any GPU."""
    named = (Baseline.soc == gpu_soc,) if gpu_soc else ()
    return newest(session, op, case, part, "upstream", Baseline.backend == BackendKind.CUDA, *named)


def chosen_gpu_soc(db: Database, gpu_soc: str | None) -> str | None:
    """`--gpu-soc`, else AUTOTUNE_GPU_SOC, else None (the newest GPU row); UserError for a name
    that is no GPU soc and has no GPU baseline."""
    from ..settings import settings

    gpu_soc = gpu_soc or settings().gpu_soc
    gpu_socs = socs_of(BackendKind.CUDA)
    if not gpu_soc or gpu_soc in gpu_socs:
        return gpu_soc
    with db.sessions() as session:
        measured = set(
            session.scalars(
                select(Baseline.soc).where(Baseline.backend == BackendKind.CUDA).distinct()
            )
        )
    if gpu_soc not in measured:
        known = sorted(measured | set(gpu_socs))
        raise UserError(
            f"unknown GPU soc {gpu_soc!r} for the GPU baseline; one of {', '.join(known)}"
        )
    return gpu_soc


def changed_picks(db: Database, rows: list[Baseline]) -> list[str]:
    """One line for each upstream row (either upstream source) whose autotune picked other configs
    than the newest earlier baseline of its source, (case, part) and soc did."""
    said = []
    with db.sessions() as session:
        for row in rows:
            if row.source not in UPSTREAM_SOURCES:
                continue
            before = newest(
                session, row.op, row.case_name, row.part, row.source,
                Baseline.soc == row.soc, Baseline.id != row.id,
                Baseline.measured_at <= row.measured_at,
            )  # fmt: skip
            if before is not None and before.configs != row.configs:
                said.append(
                    f"{row.op} {row.case_name} {row.part}: {row.source} picked "
                    f"{upstream_picks.describe(row.configs) or 'no autotuned config'} where the "
                    f"baseline of {before.measured_at:%Y-%m-%d %H:%M} picked "
                    f"{upstream_picks.describe(before.configs) or 'none'}"
                )
    return said
