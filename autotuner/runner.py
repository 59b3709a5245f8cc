"""`autotune run`: every (kernel, case) study of an op on one soc, with one run record."""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import optuna

from ops import get_op
from ops.spec import Case, KernelSpec, OpSpec
from storage import Run, StudyRecord, open_database
from storage.models import utcnow

from . import interrupts
from .backends import Backend, get_backend
from .case_store import kind_for, user_cases
from .claims import Owner, bury_dead_runs
from .environment import environment
from .errors import UserError
from .search import Plan, Progress, Settings, Study, discard_study
from .settings import settings as app_settings
from .toolchain import toolchain
from .user_cases import NO_REQUEST, CaseRequest
from .workers import Worker, preparing_lock


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
    configured = os.environ.get("AUTOTUNE_COMPILE_WORKERS")
    return int(configured) if configured else min(6, max(1, (os.cpu_count() or 2) // 2))


def run(
    op: str,
    soc: str,
    *,
    kernels: list[str] | None,
    cases: list[str] | None,
    trials: int | float,
    db_url: str,
    seed: int,
    timeout_s: float,
    restart: bool = False,
    npu_mode: str = "simd",
    request: CaseRequest = NO_REQUEST,
    extra: list[Case] = (),  # type: ignore[assignment]
    on_study: Callable[[Plan], None] | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> list[StudyRecord]:
    if not (trials > 0 if isinstance(trials, int) else 0 < trials <= 1):
        raise UserError(
            f"--trials must be a positive number of trials per study or a share in (0%, 100%], not {trials}"
        )
    backend = get_backend(soc, npu_mode)
    spec = get_op(op)
    # Asked cases, checked before anything is written; `extra`: cases tuned but not kept as the
    # op's user cases (a benchmark's held-out shapes).
    user = [*request.cases(spec, backend.is_interpreter), *extra]
    known = [c for c, _ in user_cases(spec, case_kind(backend))]
    selection = select(op, backend, kernels, cases, user, known)
    db = open_database(db_url)
    request.register(spec, db)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
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
    configured = app_settings()
    settings = Settings(
        seed=seed,
        timeout_s=timeout_s,
        heartbeat_s=configured.heartbeat_s,
        stale_after_s=configured.stale_after_s,
    )
    timer = Worker(backend.soc)
    count = compile_workers(backend)
    preparing = preparing_lock() if count else None  # made only where compile workers share it
    compilers = [Worker(backend.soc, compile_only=True, preparing=preparing) for _ in range(count)]
    chain = toolchain(backend, op)
    status = "failed"
    results = []
    try:
        with interrupts.deferred():  # Ctrl-C stops between database writes, not inside them
            for case in selection.cases:
                for kernel in selection.kernels:
                    interrupts.check()
                    plan = Plan.make(
                        selection.spec,
                        kernel,
                        case,
                        backend.soc,
                        backend.launch_options,
                        backend.limits,
                        trials,
                        backend.option_defaults,
                        chain,
                    )
                    if restart:
                        discard_study(db, plan.name)
                    if on_study:
                        on_study(plan)
                    results.append(
                        Study(db, plan, settings, run_id, timer, compilers, on_progress).run()
                    )
        status = "finished"
    except KeyboardInterrupt:
        status = "interrupted"
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
