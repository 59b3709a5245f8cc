"""One Optuna study per (op, kernel, case, soc, kernel source): propose, claim, compile, check, time.

Order of evaluation: the upstream default (trial 0); then either every feasible config, nearest
the default first (when they fit the budget), or a local search around the best config so far
with seeded TPE proposals (over ordinal axes) where the local search has nothing left.
A config is claimed in the database before it is measured, so any number of processes, on any
number of hosts, share a study without measuring a config twice or overrunning the budget.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import math
import statistics
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import TrialState, create_trial
from sqlalchemy import or_, select, update
from sqlalchemy.exc import IntegrityError

from ops.spec import Case, Config, KernelSpec, OpSpec
from storage import Database, StudyRecord
from storage.models import utcnow

from . import interrupts
from .backends import DeviceLimits, Timing
from .claims import ClaimBoard
from .errors import UserError
from .paths import port_file
from .space import SearchSpace, config_key, space_for
from .stats import faster_beyond_noise
from .toolchain import fingerprint
from .workers import Worker, WorkerLost

#: Consecutive proposals of the sampler that were already measured or infeasible before the
#: search steps to the unmeasured feasible config nearest to the best one instead.
MAX_MISSES = 20
#: The best few re-timed against the default before a winner is declared.
RETIME_CANDIDATES = 3


@dataclass(frozen=True)
class Settings:
    seed: int
    timeout_s: float
    prepare_timeout_s: float = 900.0
    heartbeat_s: float = 10.0  # claims in flight are refreshed this often...
    stale_after_s: float = 120.0  # ...and re-queued by others when older than this
    min_gain: float = 0.01  # a winner must be at least this much faster than the default...
    alpha: float = 0.01  # ...with a one-sided Mann-Whitney p-value under this
    retime_rounds: int = 5
    retime_reps: int = 20


def kernel_source_hash(op: OpSpec, kernel: KernelSpec) -> str:
    """sha256 of the kernel's `@triton.jit` function source: an edited kernel is a new study."""
    path = port_file(op.name)
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except OSError as exc:
        raise UserError(f"cannot read the port of {op.name}: {exc.strerror} ({path})") from None
    except SyntaxError as exc:
        raise UserError(
            f"port of {op.name} at {path} is not valid Python: {exc.msg} (line {exc.lineno})"
        ) from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel.port_kernel:
            text = ast.get_source_segment(source, node, padded=True) or ""
            decorators = "".join(
                ast.get_source_segment(source, d) or "" for d in node.decorator_list
            )
            return hashlib.sha256((decorators + text).encode()).hexdigest()
    raise UserError(f"{path}: no function {kernel.port_kernel} (kernel {kernel.name} of {op.name})")


def optuna_storage(db: Database) -> optuna.storages.RDBStorage:
    """Optuna's tables in our database, engines checked before use (PostgreSQL restarts)."""
    engine_kwargs = {} if db.url.startswith("sqlite") else {"pool_pre_ping": True}
    return optuna.storages.RDBStorage(db.url, engine_kwargs=engine_kwargs, heartbeat_interval=None)


def discard_study(db: Database, name: str) -> None:
    """Delete a study's trials, claims and verdict, if it has any, so that the next run starts it
    over. For when what a trial is judged by changed, not the kernel source."""
    with db.sessions() as session:
        record = session.scalar(select(StudyRecord).where(StudyRecord.name == name))
        if record is not None:
            session.delete(record)  # its claims go with it
            session.commit()
    with contextlib.suppress(KeyError):  # no Optuna study of that name
        optuna.delete_study(study_name=name, storage=optuna_storage(db))


def study_name(op: str, kernel: str, case: Case, soc: str, source_hash: str) -> str:
    return f"{op}/{kernel}/{case.name}/{soc}/{source_hash[:12]}"


def retime_candidates(
    complete: list[optuna.trial.FrozenTrial], default: Config
) -> list[optuna.trial.FrozenTrial]:
    """The fastest few trials other than the default's, to re-time against it (`complete` sorted
    by time). A trial whose compiler turned multibuffer off timed another config than its own;
    that config has a trial of its own, so it never wins as multibuffered."""
    return [
        t
        for t in complete
        if t.user_attrs["config"] != default and not t.user_attrs.get("multibuffer_fallback")
    ][:RETIME_CANDIDATES]


@dataclass
class Plan:
    """Everything fixed about one study before it runs."""

    op: OpSpec
    kernel: KernelSpec
    case: Case
    soc: str
    space: SearchSpace
    default: Config
    feasible: list[Config]
    rejected: dict[str, str]  # config key -> reason, for the configs static constraints exclude
    name: str
    source_hash: str
    strategy: str
    budget: int  # measured configs (complete or failed), statically rejected ones not counted
    #: Why the static constraints would reject the default, which is measured all the same.
    default_violation: str | None = None
    #: Compiler and runtime versions and the launchers' hash (`autotuner.toolchain`).
    toolchain: dict[str, str] | None = None

    @classmethod
    def make(
        cls,
        op: OpSpec,
        kernel: KernelSpec,
        case: Case,
        soc: str,
        launch_options: frozenset[str],
        limits: DeviceLimits,
        trials: int | float,
        option_defaults: dict[str, int | str] | None = None,
        toolchain: dict[str, str] | None = None,
    ) -> Plan:
        """`trials`: a number of measured configs, or a float in (0, 1]: that share of the
        feasible configs. `option_defaults`: the backend's (`Backend.option_defaults`).
        `toolchain` (`autotuner.toolchain`) joins the study's name: another toolchain, another
        study."""
        space = space_for(kernel, launch_options, option_defaults)
        default = space.complete(kernel.default(case))
        feasible, rejected = [], {}
        for config in space.configs():
            reason = kernel.violation(config, case, limits)
            if reason is None or config == default:  # upstream runs the default: never reject it
                feasible.append(config)
            else:
                rejected[config_key(config)] = reason
        space = space.around(feasible)
        rejected = {
            key: reason for key, reason in rejected.items() if space.contains(json.loads(key))
        }
        source = kernel_source_hash(op, kernel)
        budget = trials if isinstance(trials, int) else max(1, math.floor(trials * len(feasible)))
        strategy = "exhaustive" if len(feasible) <= budget else "tpe"
        return cls(
            op,
            kernel,
            case,
            soc,
            space,
            default,
            feasible,
            rejected,
            study_name(op.name, kernel.name, case, soc, source)
            + ("/simt" if "compile_mode" in launch_options else "")
            + (f"/tc-{fingerprint(toolchain)}" if toolchain else ""),
            source,
            strategy,
            budget,
            kernel.violation(default, case, limits),
            toolchain,
        )


@dataclass
class Proposal:
    config: Config
    source: str  # default, exhaustive, local, pattern, tpe, nearest, retry
    claim_id: int
    number: int  # the Optuna trial, created RUNNING when the config was claimed
    compiler: Worker | None = None


@dataclass
class Progress:
    """What the live display shows about the study in progress."""

    name: str
    budget: int
    used: int = 0
    best_ms: float | None = None
    default_ms: float | None = None
    failures: dict[str, int] = field(default_factory=dict)
    infeasible: int = 0


class Study:
    """Runs one study with one timing worker and optional compile workers."""

    def __init__(
        self,
        db: Database,
        plan: Plan,
        settings: Settings,
        run_id: int,
        timer: Worker,
        compilers: list[Worker],
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.db, self.plan, self.settings, self.run_id = db, plan, settings, run_id
        self.timer, self.compilers = timer, compilers
        self.on_progress = on_progress or (lambda p: None)
        self.record = self._record()
        self.board = ClaimBoard(db, self.record.id, self.record.budget, run_id)
        self.worker_name = self.board.owner.describe()
        self.distributions = plan.space.distributions()
        sampler = optuna.samplers.TPESampler(
            seed=settings.seed, multivariate=True, constant_liar=True, n_startup_trials=5
        )
        self.storage = optuna_storage(db)
        self.optuna = optuna.create_study(
            study_name=plan.name,
            storage=self.storage,
            sampler=sampler,
            direction="minimize",
            load_if_exists=True,
        )
        self.optuna_id = self.storage.get_study_id_from_name(plan.name)
        self.optuna.set_user_attr("op", plan.op.name)
        self.progress = Progress(plan.name, plan.budget)
        self.retry: deque[Config] = deque()  # configs of dead workers, measured first

    # -- bookkeeping in our tables -------------------------------------------------------------
    def _record(self) -> StudyRecord:
        plan = self.plan
        with self.db.sessions() as session:
            record = session.scalar(select(StudyRecord).where(StudyRecord.name == plan.name))
            if record is None:
                record = StudyRecord(
                    name=plan.name, op=plan.op.name, kernel=plan.kernel.name, case_name=plan.case.name,
                    case={"shape": plan.case.shape, "dtype": plan.case.dtype}, soc=plan.soc,
                    source_hash=plan.source_hash, budget=self.plan.budget, default_config=plan.default,
                    toolchain=plan.toolchain,
                    feasible_size=len(plan.feasible), strategy=plan.strategy,
                )  # fmt: skip
                session.add(record)
                try:
                    session.commit()
                except IntegrityError:  # another process created it first
                    session.rollback()
                    record = session.scalar(
                        select(StudyRecord).where(StudyRecord.name == plan.name)
                    )
            elif record.budget < self.plan.budget:
                record.budget = self.plan.budget  # a larger --trials extends the study
                session.commit()
            assert record is not None
            return record

    def used_slots(self) -> int:
        return self.board.used_slots()

    def claimed_keys(self) -> set[str]:
        return self.board.claimed_keys()

    def claim(self, config: Config, *, counted: bool = True, state: str = "running") -> int | None:
        """Take `config` (and a budget slot if counted); None if it is taken or the budget is spent."""
        return self.board.claim(config_key(config), counted=counted, state=state)

    def requeue_stale(self) -> int:
        """Free the configs of dead workers (a process of this host that is gone, at once; another
        host's once its heartbeats stopped): their trials fail as "stale" and the configs go to
        the front of this process's queue."""
        dead = self.board.remove_dead(self.settings.stale_after_s)
        for claim in dead:
            if claim.trial_number is not None:
                self._finish_trial(
                    claim.trial_number,
                    {"category": "stale", "message": f"{claim.reason}; config re-queued"},
                    None,
                    TrialState.FAIL,
                )
            self.retry.append(json.loads(claim.config_key))
        return len(dead)

    def _heartbeats(self, stop: threading.Event) -> None:
        while not stop.wait(self.settings.heartbeat_s):
            try:
                self.board.beat()
            except Exception:  # noqa: BLE001 - a missed beat is retried; the study goes on
                continue

    def finish_claim(self, claim_id: int, state: str, trial_number: int | None) -> None:
        self.board.finish(claim_id, state, trial_number)

    def release(self, claim_id: int) -> None:
        self.board.release(claim_id)

    # -- proposals -------------------------------------------------------------------------------
    def _by_distance_from_default(self) -> list[Config]:
        space, home = self.plan.space, self.plan.space.position(self.plan.default)
        return sorted(
            self.plan.feasible,
            key=lambda c: sum(abs(a - b) for a, b in zip(space.position(c), home, strict=True)),
        )

    def proposals(self) -> Iterator[Proposal]:
        """Claimed proposals, until the budget is spent or every feasible config is taken.

        The default first. Then, while the budget lasts: the unmeasured feasible neighbours of the
        best config measured so far (a local search, which DESIGN.md found reaches 98% of the
        optimum in the fewest evaluations); where it has none left, pattern moves that combine the
        steps of two of its measured neighbours, the pair with the lowest additive prediction first
        (tiles and stages often trade against each other, so the better config can sit diagonally
        even where each step alone is slower); and where those are spent too, a TPE proposal (a
        global step that can find a better basin for the local search to refine).
        """
        default = self._take(self.plan.default, "default")
        if default is not None:
            yield default
        self.record_rejections()  # after the default, so that it is trial 0
        if self.plan.strategy == "exhaustive":
            while True:
                for config in [*self.retry, *self._by_distance_from_default()]:
                    if self.used_slots() >= self.plan.budget:
                        break
                    proposal = self._take(config, "exhaustive")
                    if proposal is not None:
                        yield proposal
                self.retry.clear()
                if not self.requeue_stale():
                    return
        feasible_keys = {config_key(c) for c in self.plan.feasible}
        misses = 0
        while self.requeue_stale() or self.retry or self.used_slots() < self.plan.budget:
            if self.retry:
                proposal = self._take(self.retry.popleft(), "retry")
                if proposal is not None:
                    yield proposal
                continue
            taken = self.claimed_keys()
            if feasible_keys <= taken:
                return
            if (
                config_key(self.plan.default) not in taken
            ):  # its worker died: measure it again first
                proposal = self._take(self.plan.default, "default")
                if proposal is not None:
                    yield proposal
                continue
            measured = self.measured()
            best = min(measured.values(), key=lambda m: m[1])[0] if measured else self.plan.default
            open_keys = feasible_keys - taken
            local = [c for c in self.plan.space.neighbors(best) if config_key(c) in open_keys]
            local += [
                c
                for c in self.plan.space.pattern_moves(best, measured)
                if config_key(c) in open_keys
            ]
            if local:
                source = "local" if local[0] in self.plan.space.neighbors(best) else "pattern"
                proposal = self._take(local[0], source)
                if proposal is not None:
                    yield proposal
                continue
            if misses >= MAX_MISSES:
                nearest = self.plan.space.nearest(
                    best, [c for c in self.plan.feasible if config_key(c) not in taken]
                )
                proposal = self._take(nearest, "nearest") if nearest else None
                if proposal is not None:
                    yield proposal
                misses = 0
                continue
            trial = self.optuna.ask(self.distributions)
            config = self.plan.space.from_params(trial.params)
            rejected = config_key(config) in self.plan.rejected
            claim_id = None if rejected else self.claim(config)
            if claim_id is None:  # measured, rejected or taken by another worker: not again
                misses += 1
                trial.set_user_attr("config", config)
                trial.set_user_attr(
                    "skipped", "already measured, statically rejected or taken by another worker"
                )
                self.optuna.tell(trial, state=TrialState.PRUNED)
                continue
            misses = 0
            trial.set_user_attr("config", config)
            trial.set_user_attr("source", "tpe")
            self.finish_claim(claim_id, "running", trial.number)
            yield Proposal(config, "tpe", claim_id, trial.number)

    def _take(self, config: Config, source: str) -> Proposal | None:
        """Claim a config chosen by us (not the sampler) and open its trial; None if taken."""
        claim_id = self.claim(config)
        if claim_id is None:
            return None
        trial_id = self.storage.create_new_trial(self.optuna_id)
        params = self.plan.space.to_params(config)
        for name, distribution in self.distributions.items():
            self.storage.set_trial_param(
                trial_id, name, distribution.to_internal_repr(params[name]), distribution
            )
        self.storage.set_trial_user_attr(trial_id, "config", config)
        self.storage.set_trial_user_attr(trial_id, "source", source)
        if config == self.plan.default and self.plan.default_violation:
            # The one config measured against the static model's verdict: a failure of it is
            # no miss of the model (report.StudySummary.ub_misses).
            self.storage.set_trial_user_attr(
                trial_id, "static_violation", self.plan.default_violation
            )
        number = self.storage.get_trial_number_from_id(trial_id)
        self.finish_claim(claim_id, "running", number)
        return Proposal(config, source, claim_id, number)

    def record_rejections(self) -> None:
        """Record, once per study, every config a static constraint excludes, with the reason."""
        for key, reason in self.plan.rejected.items():
            config = json.loads(key)
            claim_id = self.claim(config, counted=False, state="infeasible")
            if claim_id is None:
                continue
            attrs = {
                "config": config,
                "category": "infeasible",
                "message": reason,
                "run_id": self.run_id,
                "soc": self.plan.soc,
            }
            trial = create_trial(
                params=self.plan.space.to_params(config),
                distributions=self.distributions,
                state=TrialState.FAIL,
                user_attrs=attrs,
            )
            trial_id = self.storage.create_new_trial(self.optuna_id, template_trial=trial)
            self.finish_claim(
                claim_id, "infeasible", self.storage.get_trial_number_from_id(trial_id)
            )
        self.progress.infeasible = len(self.plan.rejected)

    # -- results -----------------------------------------------------------------------------------
    def measured(self) -> dict[str, tuple[Config, float]]:
        """config key -> (config, median ms) of the completed trials."""
        complete = self.optuna.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return {
            config_key(t.user_attrs["config"]): (dict(t.user_attrs["config"]), t.value)
            for t in complete
        }

    def _finish_trial(
        self, number: int, attrs: dict[str, Any], value: float | None, state: TrialState
    ) -> bool:
        """Record a trial's outcome; False if it was finished meanwhile (e.g. re-queued as stale)."""
        trial_id = self.storage.get_trial_id_from_study_id_trial_number(self.optuna_id, number)
        if self.storage.get_trial(trial_id).state.is_finished():
            return False
        for key, val in attrs.items():
            self.storage.set_trial_user_attr(trial_id, key, val)
        self.optuna.tell(number, value, state=state, skip_if_finished=True)
        return True

    def record_result(self, proposal: Proposal, outcome: dict[str, Any]) -> None:
        attrs = {
            "run_id": self.run_id,
            "worker": self.worker_name,
            "soc": self.plan.soc,
            "compile_s": outcome.get("compile_s", 0.0),
            **(outcome.get("extra") or {}),  # what the compiler said (Ascend), see measure.py
        }
        if outcome["ok"]:
            attrs.update(outcome["timing"], error=outcome["error"])
            value, state = outcome["timing"]["median_ms"], TrialState.COMPLETE
        else:
            attrs.update(category=outcome["category"], message=outcome["message"])
            if outcome.get("error") is not None:
                attrs["error"] = outcome["error"]
            value, state = None, TrialState.FAIL
        self._finish_trial(proposal.number, attrs, value, state)
        self.finish_claim(
            proposal.claim_id,
            "complete" if state == TrialState.COMPLETE else "failed",
            proposal.number,
        )
        self._update_progress(proposal, outcome)

    def _update_progress(self, proposal: Proposal, outcome: dict[str, Any]) -> None:
        p = self.progress
        p.used = self.used_slots()
        if outcome["ok"]:
            median = outcome["timing"]["median_ms"]
            p.best_ms = median if p.best_ms is None else min(p.best_ms, median)
            if proposal.source == "default":
                p.default_ms = median
        else:
            p.failures[outcome["category"]] = p.failures.get(outcome["category"], 0) + 1
        self.on_progress(p)

    # -- the loop ----------------------------------------------------------------------------------
    def _prepare_workers(self) -> None:
        plan, timeout = self.plan, self.settings.prepare_timeout_s
        for worker in [self.timer, *self.compilers]:
            if worker.prepared != (plan.op.name, plan.kernel.name, plan.case.name, plan.case.dtype):
                worker.send(("prepare", plan.op.name, plan.kernel.name, plan.case))
        for worker in [self.timer, *self.compilers]:
            if worker.busy:
                try:
                    worker.receive(timeout)
                    worker.prepared = (
                        plan.op.name,
                        plan.kernel.name,
                        plan.case.name,
                        plan.case.dtype,
                    )
                except WorkerLost as lost:
                    raise UserError(
                        f"{plan.name}: preparing the case failed in a worker: {lost}"
                    ) from None

    def _measure(self, proposal: Proposal) -> dict[str, Any]:
        if proposal.compiler is not None:
            try:
                compiled = proposal.compiler.receive(self.settings.timeout_s)
            except WorkerLost as lost:
                return {
                    "ok": False,
                    "category": lost.category,
                    "message": f"while compiling: {lost}",
                }
            finally:
                if not proposal.compiler.process.is_alive() or proposal.compiler.prepared is None:
                    self._prepare_one(proposal.compiler)
            if not compiled["ok"]:
                return compiled
            compile_s = compiled["compile_s"]
            notes = compiled.get("extra") or {}
        else:
            compile_s, notes = None, {}
        try:
            outcome = self.timer.call(("measure", proposal.config), self.settings.timeout_s)
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

    def _prepare_one(self, worker: Worker) -> None:
        plan = self.plan
        worker.prepare(plan.op.name, plan.kernel.name, plan.case, self.settings.prepare_timeout_s)

    def run(self) -> StudyRecord:
        """Measure until the budget is spent or the space is exhausted, then settle the verdict.

        The verdict waits for the configs other processes are measuring: a slot held by a
        process that died is re-queued and measured here, so no study settles short."""
        self.requeue_stale()
        self._prepare_workers()
        self.progress.used = self.used_slots()
        self.on_progress(self.progress)
        stop = threading.Event()
        heartbeats = threading.Thread(target=self._heartbeats, args=(stop,), daemon=True)
        heartbeats.start()
        try:
            self._measure_proposals()
            while self.board.others_running():
                interrupts.check()
                if stop.wait(min(1.0, self.settings.heartbeat_s)) or self.requeue_stale():
                    self._measure_proposals()
        finally:
            stop.set()
            heartbeats.join()
        return self.settle()

    def _measure_proposals(self) -> None:
        """Measure proposals, compiling the next ones meanwhile, until the sampler has none."""
        pending: deque[Proposal] = deque()
        proposals = self.proposals()
        idle = deque(self.compilers)
        current: Proposal | None = None
        try:
            while True:
                while len(pending) <= len(self.compilers):
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
                outcome = self._measure(current)
                if current.compiler is not None:
                    idle.append(current.compiler)
                self.record_result(current, outcome)
                current = None
        except BaseException:
            for proposal in ([current] if current else []) + list(pending):
                self._abandon(proposal)
            raise

    def _abandon(self, proposal: Proposal) -> None:
        """Ctrl-C or an error: free the config so a later run measures it."""
        self.release(proposal.claim_id)
        self._finish_trial(proposal.number, {"category": "interrupted"}, None, TrialState.FAIL)

    # -- the verdict -------------------------------------------------------------------------------
    def settle(self) -> StudyRecord:
        """Re-time the best few interleaved with the default; keep the default unless beaten.

        Computed from every trial of the study at settle time, and stored only if no verdict on
        as many trials exists (compare-and-set): concurrent processes end on one verdict."""
        complete = sorted(
            self.optuna.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
            key=lambda t: t.value,
        )
        with self.db.sessions() as session:
            record = session.get(StudyRecord, self.record.id)
            assert record is not None
        done = (
            self.used_slots() >= record.budget
            or {config_key(c) for c in self.plan.feasible} <= self.claimed_keys()
        ) and not self.board.others_running()
        if not done or not complete or (record.verdict_trials or 0) >= len(complete):
            return record
        verdict = self._retime(complete)
        with self.db.sessions() as session:
            newer = or_(
                StudyRecord.verdict_trials.is_(None), StudyRecord.verdict_trials < len(complete)
            )
            session.execute(
                update(StudyRecord)
                .where(StudyRecord.id == record.id, newer)
                .values(verdict=verdict, verdict_at=utcnow(), verdict_trials=len(complete))
                .execution_options(synchronize_session=False)
            )
            session.commit()
            stored = session.get(StudyRecord, record.id)  # ours, or a verdict on as many trials
            assert stored is not None
            return stored

    def _retime(self, complete: list[optuna.trial.FrozenTrial]) -> dict[str, Any]:
        default = self.plan.default
        default_trial = next((t for t in complete if t.user_attrs["config"] == default), None)
        candidates = retime_candidates(complete, default)
        configs = ([default] if default_trial else []) + [
            dict(t.user_attrs["config"]) for t in candidates
        ]
        samples: dict[str, list[float]] = {config_key(c): [] for c in configs}
        rounds, reps = self.settings.retime_rounds, self.settings.retime_reps
        for _ in range(rounds):  # interleaved: drift hits every config alike
            for config in configs:
                try:
                    samples[config_key(config)] += self.timer.call(
                        ("samples", config, reps), self.settings.timeout_s
                    )
                except WorkerLost:
                    self._prepare_one(self.timer)
        summary = [
            {"config": c, "trial": t.number, **Timing.of(samples[config_key(c)]).as_dict()}
            for c, t in zip(
                configs, ([default_trial] if default_trial else []) + candidates, strict=True
            )
            if samples[config_key(c)]
        ]
        verdict: dict[str, Any] = {
            "method": f"{rounds} interleaved rounds of >= {reps} timed calls; a winner must be >= {self.settings.min_gain:.0%} faster than the default with a one-sided Mann-Whitney p < {self.settings.alpha}",
            "complete_trials": len(complete),
            "retimed": summary,
            "default_config": default,
        }
        if default_trial is None or not samples[config_key(default)]:
            best = min(summary, key=lambda s: s["median_ms"])
            verdict.update(
                winner=best["config"],
                winner_trial=best["trial"],
                winner_median_ms=best["median_ms"],
                default_median_ms=None,
                speedup=None,
                p_value=None,
                beats_default=True,
                reason="the default config failed",
            )
            return verdict
        reference = samples[config_key(default)]
        default_ms = statistics.median(reference)
        challengers = [entry for entry in summary if entry["config"] != default]
        fastest = min(challengers, key=lambda entry: entry["median_ms"], default=None)
        beats, p_value = False, None
        if fastest is not None:
            candidate = samples[config_key(fastest["config"])]
            beats, _, p_value = faster_beyond_noise(
                candidate, reference, self.settings.min_gain, self.settings.alpha
            )
        winner = (
            fastest
            if beats
            else {"config": default, "trial": default_trial.number, "median_ms": default_ms}
        )
        verdict.update(
            winner=winner["config"],
            winner_trial=winner["trial"],
            winner_median_ms=winner["median_ms"],
            p_value=p_value,
            beats_default=beats,
        )
        verdict.update(
            default_median_ms=default_ms, speedup=default_ms / verdict["winner_median_ms"]
        )
        return verdict
