"""The measurement pipeline of a study: compile workers compile the next configs while the timing
worker checks each config against the float64 reference and times it.

A study hands it an iterator of claimed proposals and two callbacks: what to record when a
config has been measured (or failed), and what to do with a proposal left unmeasured by Ctrl-C
or an error.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from core.errors import UserError
from ops.spec import Case, Config

from ..backends.compile import CompileResult
from ..vocabulary import Source
from . import interrupts
from .trial import compile_outcome
from .workers import Worker, WorkerLost


@dataclass
class Proposal:
    config: Config
    source: Source
    claim_id: int
    number: int  # the Optuna trial, created RUNNING when the config was claimed
    compiler: Worker | None = None


@dataclass(frozen=True)
class Job:
    """What the workers prepare: one kernel of an op on one case."""

    op: str
    kernel: str
    case: Case
    name: str  # the study's, for messages

    @property
    def key(self) -> tuple:
        return (self.op, self.kernel, self.case.name, self.case.dtype)


class Pipeline:
    """One timing worker and any number of compile workers, prepared for one job at a time."""

    def __init__(
        self,
        timer: Worker,
        compilers: list[Worker],
        timeout_s: float,
        prepare_timeout_s: float = 900.0,
    ) -> None:
        self.timer, self.compilers = timer, compilers
        self.timeout_s, self.prepare_timeout_s = timeout_s, prepare_timeout_s
        self.job: Job | None = None

    def prepare(self, job: Job) -> None:
        """Every worker builds the job's inputs and reference, in parallel."""
        self.job = job
        workers = [self.timer, *self.compilers]
        for worker in workers:
            if worker.prepared != job.key:
                worker.send(("prepare", job.op, job.kernel, job.case))
        for worker in workers:
            if worker.busy:
                try:
                    worker.receive(self.prepare_timeout_s)
                    worker.prepared = job.key
                except WorkerLost as lost:
                    raise UserError(
                        f"{job.name}: preparing the case failed in a worker: {lost}"
                    ) from None

    def _prepare_one(self, worker: Worker) -> None:
        assert self.job is not None
        worker.prepare(self.job.op, self.job.kernel, self.job.case, self.prepare_timeout_s)

    def measure(self, proposal: Proposal) -> dict[str, Any]:
        """The outcome of one proposal: its timing, or its failure's category and message."""
        if proposal.compiler is not None:
            try:
                compiled = proposal.compiler.receive(self.timeout_s)
            except WorkerLost as lost:
                return {
                    "ok": False,
                    "category": lost.category,
                    "message": f"while compiling: {lost}",
                }
            finally:
                if not proposal.compiler.process.is_alive() or proposal.compiler.prepared is None:
                    self._prepare_one(proposal.compiler)
            compiled = compile_outcome(CompileResult(**compiled["result"]), compiled["notes"])
            if not compiled["ok"]:
                return compiled
            compile_s = compiled["compile_s"]
            notes = compiled["extra"]
        else:
            compile_s, notes = None, {}
        try:
            outcome = self.timer.call(("measure", proposal.config), self.timeout_s)
        except WorkerLost as lost:
            self._prepare_one(self.timer)
            return {"ok": False, "category": lost.category, "message": str(lost)}
        if outcome.get("restart"):
            self.timer.restart()
            self._prepare_one(self.timer)
        if compile_s is not None:
            outcome["compile_s"] = compile_s
        outcome["extra"] = {**notes, **(outcome.get("extra") or {})}
        return outcome

    def run(
        self,
        proposals: Iterator[Proposal],
        record: Callable[[Proposal, dict[str, Any]], None],
        abandon: Callable[[Proposal], None],
    ) -> None:
        """Measure proposals, compiling the next ones meanwhile, until there are none."""
        pending: deque[Proposal] = deque()
        idle = deque(self.compilers)
        current: Proposal | None = None
        try:
            while True:
                # Every proposal is compiled before it is timed where there are compile workers:
                # a config the compiler refuses never reaches the device.
                while (idle or not self.compilers) and len(pending) <= len(self.compilers):
                    proposal = next(proposals, None)
                    if proposal is None:
                        break
                    if idle:  # compile it while earlier configs are being timed
                        proposal.compiler = idle.popleft()
                        proposal.compiler.send(("compile", proposal.config))
                    pending.append(proposal)
                if not pending:
                    break
                interrupts.check()
                current = pending.popleft()
                outcome = self.measure(current)
                if current.compiler is not None:
                    idle.append(current.compiler)
                record(current, outcome)
                current = None
        except BaseException:
            for proposal in ([current] if current else []) + list(pending):
                abandon(proposal)
            raise

    def samples(self, config: Config, reps: int) -> list[float]:
        """`reps` single-call times of a config (ms); none if the timing worker was lost."""
        try:
            return self.timer.call(("samples", config, reps), self.timeout_s)
        except WorkerLost:
            self._prepare_one(self.timer)
            return []
