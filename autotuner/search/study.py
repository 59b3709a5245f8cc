"""One Optuna study per (op, kernel, case, soc, kernel source): propose, claim, measure, settle.

The concerns live in modules of their own: the sampler proposes (`sampler`: the default, warm
starts from sibling studies, a local search, global model steps), the claim board makes sure a
config is claimed in the database before it is measured (`claims`: any number of processes, on
any number of hosts, share a study without measuring a config twice or overrunning the budget),
the pipeline measures (`pipeline`: compile and timing workers), the settlement re-times the
finalists and stores the verdict (`settle`). `Study` ties them together.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import json
import math
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import optuna
from optuna.trial import TrialState, create_trial
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from core.errors import UserError
from core.paths import port_file
from ops.spec import Case, Config, KernelSpec, OpSpec
from storage import Database, StudyRecord, optuna_storage

from ..backends import SocProfile
from ..measure.toolchain import fingerprint
from ..settings import STANDARD, Effort
from ..settings import settings as app_settings
from ..vocabulary import Failure, Source
from . import interrupts, settle
from .claims import ClaimBoard
from .pipeline import Job, Pipeline, Proposal
from .sampler import Choice, SearchSampler, polish_trials
from .space import SearchSpace, config_key, space_for

#: The re-timing on an interpreter soc, whose times are no performance: there the verdict only
#: exercises the rule, and a few calls do (the default's 5 x 20 per config was half of a run).
INTERPRETER_RETIMING = {"retime_rounds": 2, "retime_reps": 5}


@dataclass(frozen=True)
class Settings:
    """One run's study settings: its seed, trial timeout and effort level, with the process knobs
    (heartbeat, staleness, the winner's gain) as `autotuner.settings` gives them (`of`)."""

    seed: int
    timeout_s: float
    effort: Effort
    heartbeat_s: float  # claims in flight are refreshed this often...
    stale_after_s: float  # ...and re-queued by others when older than this
    min_gain: float  # a winner must be at least this much faster than the default...
    alpha: float = 0.01  # ...with a one-sided Mann-Whitney p-value under this
    prepare_timeout_s: float = 900.0

    @classmethod
    def of(
        cls, seed: int, timeout_s: float, effort: Effort = STANDARD, interpreter: bool = False
    ) -> Settings:
        """The settings of a run on this process's `autotuner.settings`; on an interpreter soc
        with `INTERPRETER_RETIMING`."""
        knobs = app_settings()
        effort = replace(effort, **INTERPRETER_RETIMING) if interpreter else effort
        return cls(seed, timeout_s, effort, knobs.heartbeat_s, knobs.stale_after_s, knobs.min_gain)


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


def study_name(
    op: str,
    kernel: str,
    case: Case,
    soc: str,
    source_hash: str,
    mode: str = "simd",
    options: frozenset[str] = frozenset(),
    toolchain: dict[str, str] | None = None,
    feeds: str = "",
) -> str:
    """A study's unique name: its kernel source, NPU mode and compiler options (another space,
    another study), the kernel its trials also time (`KernelSpec.feeds`: other times) and
    toolchain. The mode and options are also columns of its record."""
    name = f"{op}/{kernel}/{case.name}/{soc}/{source_hash[:12]}"
    if feeds:
        name += f"/with-{feeds}"
    if mode != "simd":
        name += f"/{mode}"
    if options:
        name += f"/o-{hashlib.sha256(','.join(sorted(options)).encode()).hexdigest()[:8]}"
    return name + (f"/tc-{fingerprint(toolchain)}" if toolchain else "")


@dataclass
class Plan:
    """Everything fixed about one study before it runs."""

    op: OpSpec
    kernel: KernelSpec
    case: Case
    soc: str
    profile: SocProfile
    space: SearchSpace
    default: Config
    feasible: list[Config]
    rejected: dict[str, str]  # config key -> reason, for the configs static constraints exclude
    name: str
    source_hash: str
    strategy: str  # the sampler's (sampler.STRATEGIES)
    budget: int  # measured configs (complete or failed), statically rejected ones not counted
    #: Why the static constraints would reject the default, which is measured all the same.
    default_violation: str | None = None
    #: Compiler and runtime versions and the kernel's launch fingerprint (`autotuner.measure.toolchain`).
    toolchain: dict[str, str] | None = None
    #: The last trials of the budget, which go to the polish first (`sampler.polish_trials`).
    polish: int = 0

    @classmethod
    def make(
        cls,
        op: OpSpec,
        kernel: KernelSpec,
        case: Case,
        soc: str,
        profile: SocProfile,
        trials: int | float,
        toolchain: dict[str, str] | None = None,
        sampler: str = "local",
        polish: bool = STANDARD.polish,
    ) -> Plan:
        """`profile`: what the soc lets the search vary and must respect (`soc_profile`, or
        `SocProfile.of(backend)`). `trials`: a number of measured configs, or a float in (0, 1]:
        that share of the feasible configs. `toolchain` (`autotuner.measure.toolchain`) joins
        the study's name: another toolchain, another study. `sampler`: the strategy where the
        feasible configs exceed the budget (`sampler.STRATEGIES`); where they fit, every one is
        measured. `polish`: the budget's last trials go to the polish first (`Effort.polish`)."""
        space = space_for(kernel, profile.launch_options, profile.option_defaults)
        default = space.complete(kernel.default(case))
        refused = space.partition(case, profile.limits)[1]
        # Upstream runs the default: it is never rejected.
        rejected = {config_key(c): reason for c, reason in refused if c != default}
        feasible = [c for c in space.configs() if config_key(c) not in rejected]
        space = space.around(feasible)
        rejected = {
            key: reason for key, reason in rejected.items() if space.contains(json.loads(key))
        }
        source = kernel_source_hash(op, kernel)
        budget = trials if isinstance(trials, int) else max(1, math.floor(trials * len(feasible)))
        strategy = "exhaustive" if len(feasible) <= budget else sampler
        name = study_name(
            op.name, kernel.name, case, soc, source, profile.mode, profile.compiler_options,
            toolchain, kernel.feeds,
        )  # fmt: skip
        return cls(
            op,
            kernel,
            case,
            soc,
            profile,
            space,
            default,
            feasible,
            rejected,
            name,
            source,
            strategy,
            budget,
            kernel.violation(default, case, profile.limits),
            toolchain,
            polish_trials(space, strategy, budget) if polish else 0,
        )


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
    """Runs one study: the sampler proposes, the claim board claims, the pipeline measures."""

    def __init__(
        self,
        db: Database,
        plan: Plan,
        settings: Settings,
        run_id: int,
        pipeline: Pipeline,
        warm_starts: Sequence[Config] = (),
        on_progress: Callable[[Progress], None] | None = None,
    ) -> None:
        self.db, self.plan, self.settings, self.run_id = db, plan, settings, run_id
        self.pipeline = pipeline
        self.on_progress = on_progress or (lambda p: None)
        self.record = self._record()
        self.board = ClaimBoard(db, self.record.id, self.record.budget, run_id)
        self.worker_name = self.board.owner.describe()
        self.sampler = SearchSampler(
            plan.space,
            plan.feasible,
            plan.default,
            strategy=plan.strategy,
            warm_starts=warm_starts,
            seed=settings.seed,
            taken=lambda study: self.board.claimed_keys(),
        )
        self.storage = optuna_storage(db)
        self.optuna = optuna.create_study(
            study_name=plan.name,
            storage=self.storage,
            sampler=self.sampler,
            direction="minimize",
            load_if_exists=True,
        )
        self.optuna_id = self.storage.get_study_id_from_name(plan.name)
        self.optuna.set_user_attr("op", plan.op.name)
        self.progress = Progress(plan.name, plan.budget)
        self.retry: deque[Config] = deque()  # configs of dead workers, measured first

    def _record(self) -> StudyRecord:
        plan = self.plan
        with self.db.sessions() as session:
            record = session.scalar(select(StudyRecord).where(StudyRecord.name == plan.name))
            if record is None:
                record = StudyRecord(
                    name=plan.name, op=plan.op.name, kernel=plan.kernel.name, case_name=plan.case.name,
                    case={"shape": plan.case.shape, "dtype": plan.case.dtype}, soc=plan.soc,
                    source_hash=plan.source_hash, budget=plan.budget, default_config=plan.default,
                    feasible_size=len(plan.feasible), strategy=plan.strategy, toolchain=plan.toolchain,
                    npu_mode=plan.profile.mode, npu_options=sorted(plan.profile.compiler_options),
                )  # fmt: skip
                session.add(record)
                try:
                    session.commit()
                except IntegrityError:  # another process created it first
                    session.rollback()
                    record = session.scalar(
                        select(StudyRecord).where(StudyRecord.name == plan.name)
                    )
            elif record.budget < plan.budget:
                record.budget = plan.budget  # a larger --trials extends the study
                session.commit()
            assert record is not None
            return record

    def requeue_stale(self) -> int:
        """Free the configs of dead workers (a process of this host that is gone, at once; another
        host's once its heartbeats stopped): their trials fail as stale and the configs go to
        the front of this process's queue."""
        dead = self.board.remove_dead(self.settings.stale_after_s)
        for claim in dead:
            if claim.trial_number is not None:
                self._finish_trial(
                    claim.trial_number,
                    {"category": Failure.STALE, "message": f"{claim.reason}; config re-queued"},
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

    # -- proposals -------------------------------------------------------------------------------
    def proposals(self) -> Iterator[Proposal]:
        """Claimed proposals, until the budget is spent or every feasible config is taken.

        The configs of dead workers first; then the sampler's, each claimed before its trial
        is opened: a config another process claimed meanwhile is never a trial here, the sampler
        is asked again; in the budget's last `polish` slots the polish's first. The static
        rejections are recorded after the first trial (the default, trial 0, in a new study)."""
        recorded = config_key(self.plan.default) in self.board.claimed_keys()
        if recorded:
            self.record_rejections()
        while True:
            used = self.board.used_slots()
            if self.retry:
                choice: Choice | None = Choice(self.retry.popleft(), Source.RETRY)
            elif used < self.plan.budget - self.plan.polish:
                choice = self.sampler.propose(self.optuna)
            elif used < self.plan.budget:
                choice = self.sampler.polish(self.optuna) or self.sampler.propose(self.optuna)
            else:
                choice = None
            if choice is None:
                if self.requeue_stale():
                    continue
                return
            claim_id = self.board.claim(config_key(choice.config))
            if claim_id is None:  # taken meanwhile, or the last slot went: look again
                continue
            yield self._open_trial(choice, claim_id)
            if not recorded:
                self.record_rejections()
                recorded = True

    def _open_trial(self, choice: Choice, claim_id: int) -> Proposal:
        """The trial of a claimed config: Optuna's ask, the sampler pinned to the config."""
        self.sampler.pin(choice)
        trial = self.optuna.ask(self.sampler.distributions)
        self.sampler.pin(None)  # consumed, unless every axis has a single value
        trial.set_user_attr("config", choice.config)
        trial.set_user_attr("source", choice.source)
        if choice.config == self.plan.default and self.plan.default_violation:
            # The one config measured against the static model's verdict: a failure of it is
            # no miss of the model (report.StudySummary.ub_misses).
            trial.set_user_attr("static_violation", self.plan.default_violation)
        self.board.finish(claim_id, "running", trial.number)
        return Proposal(choice.config, choice.source, claim_id, trial.number)

    def record_rejections(self) -> None:
        """Record, once per study, every config a static constraint excludes, with the reason."""
        for key, reason in self.plan.rejected.items():
            config = json.loads(key)
            claim_id = self.board.claim(key, counted=False, state="infeasible")
            if claim_id is None:
                continue
            attrs = {
                "config": config,
                "category": Failure.INFEASIBLE,
                "message": reason,
                "run_id": self.run_id,
                "soc": self.plan.soc,
            }
            trial = create_trial(
                params=self.plan.space.to_params(config),
                distributions=self.sampler.distributions,
                state=TrialState.FAIL,
                user_attrs=attrs,
            )
            trial_id = self.storage.create_new_trial(self.optuna_id, template_trial=trial)
            self.board.finish(
                claim_id, "infeasible", self.storage.get_trial_number_from_id(trial_id)
            )
        self.progress.infeasible = len(self.plan.rejected)

    # -- results -----------------------------------------------------------------------------------
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
            **(outcome.get("extra") or {}),  # what the compiler said (Ascend), see trial.py
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
        self.board.finish(
            proposal.claim_id,
            "complete" if state == TrialState.COMPLETE else "failed",
            proposal.number,
        )
        self._update_progress(proposal, outcome)

    def _update_progress(self, proposal: Proposal, outcome: dict[str, Any]) -> None:
        p = self.progress
        p.used = self.board.used_slots()
        if outcome["ok"]:
            median = outcome["timing"]["median_ms"]
            p.best_ms = median if p.best_ms is None else min(p.best_ms, median)
            if proposal.source == Source.DEFAULT:
                p.default_ms = median
        else:
            p.failures[outcome["category"]] = p.failures.get(outcome["category"], 0) + 1
        self.on_progress(p)

    def abandon(self, proposal: Proposal) -> None:
        """Ctrl-C or an error: free the config so a later run measures it."""
        self.board.release(proposal.claim_id)
        self._finish_trial(
            proposal.number, {"category": Failure.INTERRUPTED}, None, TrialState.FAIL
        )

    # -- the loop ----------------------------------------------------------------------------------
    def run(self) -> StudyRecord:
        """Measure until the budget is spent or the space is exhausted, then settle the verdict.

        The verdict waits for the configs other processes are measuring: a slot held by a
        process that died is re-queued and measured here, so no study settles short."""
        plan = self.plan
        self.requeue_stale()
        self.pipeline.prepare(Job(plan.op.name, plan.kernel.name, plan.case, plan.name))
        self.progress.used = self.board.used_slots()
        self.on_progress(self.progress)
        stop = threading.Event()
        heartbeats = threading.Thread(target=self._heartbeats, args=(stop,), daemon=True)
        heartbeats.start()
        try:
            self.pipeline.run(self.proposals(), self.record_result, self.abandon)
            while self.board.others_running():
                interrupts.check()
                if stop.wait(min(1.0, self.settings.heartbeat_s)) or self.requeue_stale():
                    self.pipeline.run(self.proposals(), self.record_result, self.abandon)
        finally:
            stop.set()
            heartbeats.join()
        return self.settle()

    def settle(self) -> StudyRecord:
        """The verdict, once the budget is spent and no other process measures: computed from
        every trial of the study at settle time and stored by compare-and-set."""
        complete = sorted(
            self.optuna.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)),
            key=lambda t: t.value,
        )
        with self.db.sessions() as session:
            record = session.get(StudyRecord, self.record.id)
            assert record is not None
        done = (
            self.board.used_slots() >= record.budget
            or {config_key(c) for c in self.plan.feasible} <= self.board.claimed_keys()
        ) and not self.board.others_running()
        if not done or not complete or (record.verdict_trials or 0) >= len(complete):
            return record
        effort, settings = self.settings.effort, self.settings
        rules = settle.Rules(
            settings.min_gain,
            settings.alpha,
            effort.retime_rounds,
            effort.retime_reps,
            effort.finals,
        )
        plan = self.plan
        frozen = settle.frozen_config(plan.op.name, plan.soc, plan.kernel.name, plan.case.name)
        verdict = settle.retime(complete, plan.default, self.pipeline.samples, rules, frozen)
        return settle.store(self.db, record.id, verdict, len(complete))
