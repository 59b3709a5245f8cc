"""Compiling many configs of a kernel on a case for an Ascend soc without its device: parallel
workers with a timeout, each verdict kept in the database by what the compiled code depends on.

Each config is first keyed in a worker (Triton's specialization of the launch, no compile:
`backends.compile.compile_key`); a key already in `autotune_compiles` is answered from there, any
other config is compiled and stored. A worker that outlives the timeout is replaced and the config
recorded as "timeout"; one that dies as "crash". Nothing raises for a config: every one gets a
verdict.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from core.errors import UserError
from core.paths import port_file
from core.socs import BackendKind
from ops.spec import Case, Config
from storage import CompileRecord, Database

from ..backends import BackendSpec
from ..backends.compile import CompileResult, ascend_compiler
from ..vocabulary import Failure
from .space import config_key
from .workers import COMPILE_WITHOUT_DEVICE, Worker, WorkerLost

#: A verdict as it is reported: (config, result, whether it came from the database).
Verdict = tuple[Config, CompileResult, bool]


@dataclass
class _Task:
    config: Config
    key: str | None = None
    deadline: float = 0.0


def _cached(db: Database, key: str) -> CompileResult | None:
    with db.sessions() as session:
        row = session.scalar(select(CompileRecord).where(CompileRecord.key == key))
    if row is None:
        return None
    return CompileResult(
        row.category,
        row.message,
        row.seconds,
        row.required_bits,
        row.available_bits,
        row.multibuffer_dropped,
        dict(row.memory),
    )


def _store(
    db: Database, key: str, op: str, kernel: str, soc: str, case: Case, config: Config,
    result: CompileResult, compiler: str,
) -> None:  # fmt: skip
    with db.sessions() as session:
        session.add(
            CompileRecord(
                key=key, op=op, kernel=kernel, soc=soc, case_name=case.name, config=config,
                category=result.category, message=result.message[:1000], seconds=result.seconds,
                required_bits=result.required_bits, available_bits=result.available_bits,
                multibuffer_dropped=result.multibuffer_dropped, memory=result.memory,
                compiler=compiler[:300],
            )
        )  # fmt: skip
        try:
            session.commit()
        except IntegrityError:  # another process stored the same key meanwhile
            session.rollback()


class CompileFarm:
    """Worker processes compiling for one Ascend soc, kept across the kernels and cases they are
    given (a worker's start and a case's inputs take seconds); close it, or use it in `with`."""

    def __init__(self, db: Database, soc: str, jobs: int = 2, timeout_s: float = 300.0) -> None:
        self.compiler = ascend_compiler(soc)  # one line naming the package, before any process
        self.db, self.soc, self.timeout_s = db, soc, timeout_s
        self.jobs = max(1, jobs)
        self.workers: list[Worker] = []

    def __enter__(self) -> CompileFarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for worker in self.workers:
            worker.close()
        self.workers = []

    def _prepare(self, count: int, op: str, kernel: str, case: Case) -> None:
        """`count` workers, each with the case's inputs built (in parallel)."""
        while len(self.workers) < count:
            self.workers.append(
                Worker(BackendSpec.make(BackendKind.NPU, self.soc), mode=COMPILE_WITHOUT_DEVICE)
            )
        key = (op, kernel, case.name, case.dtype)
        waiting = [w for w in self.workers[:count] if w.prepared != key]
        for worker in waiting:
            worker.send(("prepare", op, kernel, case))
        for worker in waiting:
            try:
                worker.receive(max(self.timeout_s, 900.0))
            except (WorkerLost, RuntimeError) as exc:
                raise UserError(
                    f"{op} {kernel} {case.name}: preparing the case failed: {exc}"
                ) from None
            worker.prepared = key

    def compile(
        self,
        op: str,
        kernel: str,
        case: Case,
        configs: Iterable[Config],
        on_verdict: Callable[[Verdict], None] | None = None,
    ) -> dict[str, Verdict]:
        """Config key -> (config, verdict, from the database) for every config."""
        if not port_file(op).is_file():
            raise UserError(f"port of {op} not found at {port_file(op)}")
        todo = deque(_Task(c) for c in configs)
        verdicts: dict[str, Verdict] = {}
        if not todo:
            return verdicts
        count = min(self.jobs, len(todo))
        self._prepare(count, op, kernel, case)
        workers = self.workers[:count]
        busy: dict[int, _Task] = {}

        def give(result: CompileResult, task: _Task, cached: bool) -> None:
            verdict = (task.config, result, cached)
            verdicts[config_key(task.config)] = verdict
            if on_verdict:
                on_verdict(verdict)

        def send(index: int, task: _Task) -> None:
            request = ("compile", task.config) if task.key else ("compile_key", task.config)
            task.deadline = time.monotonic() + self.timeout_s
            workers[index].send(request)
            busy[index] = task

        while todo or busy:
            for index in range(len(workers)):
                if index not in busy and todo:
                    send(index, todo.popleft())
            time.sleep(0.01)
            for index, task in list(busy.items()):
                worker = workers[index]
                if not worker.ready() and time.monotonic() < task.deadline:
                    continue
                del busy[index]
                try:
                    reply = worker.receive(0.0)
                except WorkerLost as lost:  # replaced: prepare the new process
                    worker.prepare(op, kernel, case, max(self.timeout_s, 900.0))
                    give(CompileResult(lost.category, str(lost), self.timeout_s), task, False)
                    continue
                except RuntimeError as exc:  # the launcher itself failed, before any compile
                    give(CompileResult(Failure.COMPILE, str(exc).splitlines()[0]), task, False)
                    continue
                if task.key is None:  # keyed: answer from the database, or compile it
                    task.key = reply
                    known = _cached(self.db, reply)
                    if known is not None:
                        give(known, task, True)
                    else:
                        send(index, task)
                    continue
                result = CompileResult(**reply["result"])
                _store(self.db, task.key, op, kernel, self.soc, case, task.config, result,
                       self.compiler.describe())  # fmt: skip
                give(result, task, False)
        return verdicts


def compile_configs(
    db: Database,
    op: str,
    kernel: str,
    case: Case,
    soc: str,
    configs: Iterable[Config],
    *,
    jobs: int = 2,
    timeout_s: float = 300.0,
    on_verdict: Callable[[Verdict], None] | None = None,
) -> dict[str, Verdict]:
    """Config key -> (config, verdict, from the database) for every config, compiled for `soc`'s
    target by `jobs` worker processes (UserError where the compiler is not installed)."""
    with CompileFarm(db, soc, jobs, timeout_s) as farm:
        return farm.compile(op, kernel, case, configs, on_verdict)
