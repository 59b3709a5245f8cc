"""`autotune run`: every (kernel, case) study of an op on one soc, with one run record."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import optuna
from sqlalchemy import select as query

from core.errors import UserError
from core.files import check_writable
from core.paths import cases_file
from core.socs import BackendKind
from ops import get_op
from ops.spec import Case, KernelSpec, OpSpec
from storage import Database, Run, StudyRecord, open_database
from storage.models import utcnow

from ..backends import Backend, SocProfile, open_backend
from ..cases.bound import Room
from ..cases.store import kind_for, user_cases
from ..measure.environment import environment
from ..measure.toolchain import stale_configs, toolchain
from ..settings import settings as app_settings
from . import interrupts, warm_starts
from .claims import ClaimBoard, Owner, bury_dead_runs
from .pipeline import Pipeline
from .request import RunRequest
from .study import Plan, Progress, Settings, Study, discard_study
from .workers import COMPILE, Worker, preparing_lock

#: Where a study's warm starts come from: the winners of its sibling studies.
Siblings = Callable[[Plan], list[warm_starts.Sibling]]


@dataclass(frozen=True)
class Selection:
    spec: OpSpec
    kernels: list[KernelSpec]
    cases: list[Case]


def select(
    op: str,
    backend: Backend,
    kernels: list[str] | None,
    cases: list[str] | None,
    user: list[Case] = (),  # type: ignore[assignment]
    known: list[Case] = (),  # type: ignore[assignment]
) -> Selection:
    """The kernels and cases to tune; unknown names list the valid ones.

    `user`: cases asked by shape or cases file, tuned besides the named ones; `known`: the op's
    stored user cases, which `cases` may name. Neither given: the op's built-in cases.
    """
    spec = get_op(op)
    chosen_kernels = [spec.kernel(k) for k in kernels] if kernels else list(spec.kernels)
    kind = case_kind(backend)
    available = spec.cases(kind)
    chosen_cases = [] if user else available
    if cases:
        by_name = {c.name: c for c in [*available, *known]}
        unknown = [c for c in cases if c not in by_name]
        if unknown:
            raise UserError(
                f"unknown case {unknown[0]!r} for {op} on {backend.soc} ({kind} cases); valid: {', '.join(by_name)}"
            )
        chosen_cases = [by_name[c] for c in cases]
    chosen_cases += [c for c in user if c.name not in {x.name for x in chosen_cases}]
    return Selection(spec, chosen_kernels, chosen_cases)


def case_kind(backend: Backend) -> str:
    """Interpreter-sized cases on cpu, performance cases on a device."""
    return kind_for(backend.is_interpreter)


def compile_workers(backend: Backend) -> int:
    """Compile workers beside the timing worker; none on the interpreter (nothing to compile)."""
    if backend.is_interpreter:
        return 0
    configured = app_settings().compile_workers
    return configured or min(6, max(1, (os.cpu_count() or 2) // 2))


def database_siblings(db: Database) -> Siblings:
    """Sibling winners as `autotune run` reads them: our studies' verdicts and the frozen configs."""

    def siblings(plan: Plan) -> list[warm_starts.Sibling]:
        op, kernel = plan.op.name, plan.kernel.name
        return warm_starts.from_studies(
            db, op, kernel, plan.soc, plan.case.name, plan.name
        ) + warm_starts.from_frozen(op, kernel)

    return siblings


def refuse_live_restart(db: Database, plans: list[Plan], stale_after_s: float) -> None:
    """UserError naming the studies that live processes are measuring, if any."""
    live = []
    for plan in plans:
        with db.sessions() as session:
            record = session.scalar(query(StudyRecord).where(StudyRecord.name == plan.name))
        if record is not None:
            board = ClaimBoard(db, record.id, record.budget, None)
            workers = board.live_workers(stale_after_s)
            if workers:
                live.append(f"{plan.name} ({', '.join(sorted(workers))})")
    if live:
        raise UserError(
            f"--restart refused: live processes are measuring {'; '.join(live)}; "
            "let them finish or stop them, or add --force"
        )


def run(
    request: RunRequest,
    *,
    siblings: Siblings | None = None,
    on_study: Callable[[Plan], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> list[StudyRecord]:
    """Runs the studies `request` asks, under one run record; `siblings` (default: the
    database's winners) seed their warm starts, `on_study` and `on_progress` report. The
    request's effort level gives the polish and the re-timing (its budget comes as `trials`)."""
    op, trials, cases = request.op, request.trials, request.cases
    backend_spec = request.backend_spec()
    backend = open_backend(backend_spec)
    spec = get_op(op)
    # Asked cases, checked before anything is written; `extra`: cases tuned but not kept as the
    # op's user cases (a benchmark's held-out shapes).
    room = Room.here(backend)
    asked = request.case_request.cases(spec, backend.is_interpreter, room=room)
    user = [*asked, *request.extra]
    known = [c for c, _ in user_cases(spec, case_kind(backend))]
    stale: set[tuple[str, str]] | None = None
    if request.only_stale:
        # The (kernel, case) pairs frozen for this soc whose numbers may have moved (their kernel,
        # launch arguments or toolchain changed), among the asked kernels and cases.
        stale = {(s.kernel, s.case) for s in stale_configs(spec, backend.versions(), backend.soc)}
        wanted = {c.name for c in user} | set(cases or ())
        tunable = {c.name for c in [*spec.cases(case_kind(backend)), *known]}
        cases = sorted({c for _, c in stale if c in tunable and (not wanted or c in wanted)})
        if not cases:
            return []
    selection = select(op, backend, request.kernels, cases, user, known)
    chains = {k.name: toolchain(backend, op, k.port_kernel) for k in selection.kernels}
    plans = [
        Plan.make(
            selection.spec,
            kernel,
            case,
            backend.soc,
            SocProfile.of(backend),
            trials,
            chains[kernel.name],
            request.sampler,
            request.effort.polish,
        )
        for case in selection.cases
        for kernel in selection.kernels
        if stale is None or (kernel.name, case.name) in stale
    ]
    if not plans:
        return []
    if asked:  # a checkout that cannot keep them is told before anything is measured
        check_writable([cases_file(spec.name)])
    db = open_database(request.db_url)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    if request.restart and not request.force:
        refuse_live_restart(db, plans, app_settings().stale_after_s)
    siblings = siblings or database_siblings(db)
    # Upstream's autotune lists are GPU configs: they seed GPU studies only.
    listed = {
        k.name: warm_starts.from_upstream(spec, k) if backend.kind == BackendKind.CUDA else []
        for k in selection.kernels
    }
    owner = Owner.this_process()
    bury_dead_runs(db, owner)
    with db.sessions() as session:
        record = Run(
            op=op,
            soc=backend.soc,
            command=" ".join(sys.argv)[:2000],
            environment=environment(backend),
            host=owner.host,
            pid=owner.pid,
            pid_started=owner.started,
        )
        session.add(record)
        session.commit()
        run_id = record.id
    settings = Settings.of(request.seed, request.timeout_s, request.effort, backend.is_interpreter)
    timer = Worker(backend_spec)
    count = compile_workers(backend)
    preparing = preparing_lock() if count else None  # made only where compile workers share it
    compilers = [Worker(backend_spec, mode=COMPILE, preparing=preparing) for _ in range(count)]
    pipeline = Pipeline(timer, compilers, settings.timeout_s, settings.prepare_timeout_s)
    status = "failed"
    results = []
    # The asked cases are kept once their studies finished or were interrupted (a re-run
    # resumes them); a run that fails leaves no case and no study of a case it brought.
    kept = {c.name for c, _ in user_cases(spec, case_kind(backend), db)} if asked else set()
    brought = {c.name for c in asked} - kept
    try:
        with interrupts.deferred():  # Ctrl-C stops between database writes, not inside them
            for plan in plans:
                interrupts.check()
                if request.restart:
                    discard_study(db, plan.name)
                if on_study:
                    on_study(plan)
                starts = warm_starts.choose(
                    plan.space,
                    plan.feasible,
                    plan.default,
                    plan.budget,
                    (plan.case.name, plan.case.shape, plan.case.dtype, plan.soc),
                    siblings(plan),
                    listed[plan.kernel.name],
                )
                study = Study(db, plan, settings, run_id, pipeline, starts, on_progress)
                results.append(study.run())
        status = "finished"
        request.case_request.register(spec, db, room)
    except KeyboardInterrupt:
        status = "interrupted"
        request.case_request.register(spec, db, room)
        raise
    except BaseException:
        for plan in plans:
            if plan.case.name in brought:
                discard_study(db, plan.name)
        raise
    finally:
        for worker in (timer, *compilers):
            worker.close()
        with db.sessions() as session:
            finished = session.get(Run, run_id)
            finished.status, finished.finished_at = status, utcnow()
            session.commit()
        db.engine.dispose()
    return results
