"""Response models of the JSON API."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, computed_field

from autotuner.search.verdict import Verdict
from core.socs import CPU

T = TypeVar("T")


def _utc(value: datetime) -> datetime:
    """SQLite (and Optuna's columns) hand back naive datetimes: they are UTC."""
    return value if value.tzinfo else value.replace(tzinfo=UTC)


Utc = Annotated[datetime, AfterValidator(_utc)]


class OnSoc(BaseModel):
    """Numbers of one soc; on `cpu` they are Triton interpreter times, never performance."""

    soc: str

    @computed_field
    @property
    def interpreter(self) -> bool:
        return self.soc == CPU


class Page(BaseModel, Generic[T]):
    """One slice of a longer list."""

    items: list[T]
    total: int
    limit: int
    offset: int


class Message(BaseModel):
    detail: str


class OpOut(BaseModel):
    name: str
    known: bool  # defined by a module of `ops` (else only found in the database)
    kernels: list[str]
    parts: dict[str, list[str]]
    socs: list[str]  # socs with any data in the database or frozen entries in the checkout
    #: Frozen configs whose kernel or launch arguments changed since they were tuned, and why in
    #: one line (`autotuner.measure.toolchain.stale_configs`).
    stale_configs: int = 0
    stale: str | None = None


class BaselineOut(BaseModel):
    """A timing of one part; `interpreter` rows are Triton interpreter times, never performance."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    op: str
    soc: str
    case_name: str
    part: str
    source: str
    label: str | None
    configs: dict[str, Any]
    median_ms: float
    p20_ms: float
    p80_ms: float
    n: int
    interpreter: bool
    measured_at: Utc


class CheckOut(OnSoc):
    """One `autotune check` verdict of a (case, part) against its frozen-config baseline."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    op: str
    case_name: str
    part: str
    label: str | None
    baseline_id: int
    median_ms: float
    p20_ms: float
    p80_ms: float
    n: int
    change: float
    p_value: float
    threshold: float
    regressed: bool
    #: "ok", "regressed" or "contended" (the device looked shared: the ratio could hide a
    #: regression); `contention` says why.
    outcome: str
    contention: str | None
    gpu_ratio: float | None
    checked_at: Utc


class PreviousOut(BaseModel):
    """The entry a frozen kernel replaced when its label moved on (M1 -> M2): its label, config
    and median as frozen then; both configs' medians re-timed side by side by the newer study,
    and their ratio, where it measured the older config."""

    label: str | None
    date: str | None = None
    config: dict[str, Any] | None = None
    median_ms: float | None = None
    retimed_ms: float | None = None
    retimed_now_ms: float | None = None
    speedup: float | None = None
    #: Whether the config launches otherwise (a key added at its default is no change).
    config_changed: bool | None = None


class FrozenKernelOut(BaseModel):
    """One kernel's entry of a frozen version."""

    kernel: str
    config: dict[str, Any]
    median_ms: float | None
    default_ms: float | None
    speedup_over_default: float | None
    beats_default: bool | None
    gpu_baseline_ms: float | None
    gpu_baseline_soc: str | None
    study: str | None
    trial: int | None
    label: str | None = None  # the label the kernel was frozen under, where the entry says
    previous: PreviousOut | None = None


class AccuracyCell(BaseModel):
    """The newest verdicts of a case's outputs, for the overview's accuracy column."""

    passed: bool
    outputs: int
    failed: list[str]  # "output: reason" of each failed output
    verified_at: Utc
    #: Where upstream's outputs came from when another machine made them ("on H200, saved
    #: 2026-12-04"), one entry per origin; empty: upstream ran beside the port.
    reference_from: list[str] = []


class CaseOut(BaseModel):
    """One (op, soc, case, part): frozen time, the GPU baseline, the newest baselines and check.

    On an interpreter soc the times are interpreter times: ratios and speedups are left out.
    """

    op: str
    soc: str
    case_name: str
    part: str
    interpreter: bool
    label: str | None
    frozen_at: Utc | None
    #: Where the frozen config and times come from: "database", or "from the repository
    #: (frozen at <date>, <label>)" for a checkout's performance json the database does not hold.
    source: str | None = None
    kernels: list[FrozenKernelOut]
    frozen_ms: float | None  # sum over the part's kernels, when all are frozen
    default_ms: float | None
    speedup_over_default: float | None
    gpu_baseline_ms: float | None
    gpu_baseline_soc: str | None
    gpu_baseline_source: str | None = None  # "database", or the source of the frozen entry
    ratio_to_gpu: float | None  # frozen / GPU baseline
    #: The frozen time's share of the soc's measured ceiling that bounds it, and which one
    #: (memory or compute); None without ceilings or a traffic model.
    roofline: float | None = None
    roofline_bound: str | None = None
    baselines: list[BaselineOut]  # the newest per source on this soc
    check: CheckOut | None
    accuracy: AccuracyCell | None = None  # the newest verdicts of the case's outputs


class FrozenVersionOut(OnSoc):
    model_config = ConfigDict(from_attributes=True)

    id: int
    op: str
    label: str
    created_at: Utc
    content_hash: str
    entries: dict[str, dict[str, Any]]  # "kernel case" -> config and numbers


class StudyOut(OnSoc):
    """Our record of one Optuna study, with its trials counted by state."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    op: str
    kernel: str
    case_name: str
    source_hash: str
    strategy: str
    budget: int
    feasible_size: int
    default_config: dict[str, Any]
    verdict: Verdict | None  # read from any stored form, written at the current version
    verdict_at: Utc | None
    created_at: Utc
    trials: dict[str, int] = {}  # state -> count


class TrialOut(BaseModel):
    number: int
    state: str
    value: float | None  # median ms of a complete trial (None if not finite)
    config: dict[str, Any] | None
    source: str | None  # how the config was chosen: default, local, tpe, ...
    category: str | None  # failure category (compile, resource, timeout, infeasible, ...)
    message: str | None
    median_ms: float | None = None  # the timing's median, p20, p80 and repetitions
    p20_ms: float | None = None
    p80_ms: float | None = None
    n: int | None = None
    error: float | None = None  # worst norm-wise relative error against the float64 reference
    started_at: Utc | None
    completed_at: Utc | None


class ImportResult(BaseModel):
    summary: Any  # what the import reports


class AccuracyOut(OnSoc):
    """One output of one case as `autotune verify` judged it against the float64 golden."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    op: str
    case_name: str
    case: dict[str, Any]  # shape, dtype, kind
    output: str
    configs: dict[str, Any]  # kernel -> config the port's launchers picked
    metrics: dict[str, Any]  # port and second-reference errors, their ratios
    reference: str  # the second reference: upstream, torch, or none
    #: Where upstream's outputs came from when another machine made them; None: this machine.
    reference_from: str | None = None
    level: str
    passed: bool
    mode: str  # dual, golden (the RFC's fallback), single
    reason: str
    toolchain: dict[str, Any]
    verified_at: Utc
