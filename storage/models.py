"""The service's own tables (prefixed `autotune_`, beside Optuna's)."""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    TypeDecorator,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

from core.socs import BackendKind, is_npu_soc


def utcnow() -> datetime:
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Stored in UTC, read back time-zone aware on every backend.

    PostgreSQL keeps the zone itself; SQLite stores text without it and returns naive values,
    which Python refuses to compare with aware ones. A naive value bound here is taken as UTC.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        aware = value if value.tzinfo else value.replace(tzinfo=UTC)
        utc = aware.astimezone(UTC)
        return utc.replace(tzinfo=None) if dialect.name == "sqlite" else utc

    def process_result_value(self, value: datetime | None, dialect: Any) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def measuring_backend(soc: str, interpreter: bool) -> BackendKind:
    """The backend a row of this soc came from: the interpreter, an NPU (Ascend socs) or a GPU."""
    if interpreter:
        return BackendKind.CPU
    return BackendKind.NPU if is_npu_soc(soc) else BackendKind.CUDA


def _backend_of(context: Any) -> str:
    row = context.get_current_parameters()
    return measuring_backend(row["soc"], bool(row.get("interpreter"))).value


class Base(DeclarativeBase):
    type_annotation_map = {
        dict[str, Any]: JSON,
        list[float]: JSON,
        list[str]: JSON,
        datetime: UTCDateTime(),
    }


class Run(Base):
    """One `autotune run` invocation and the environment its numbers came from."""

    __tablename__ = "autotune_runs"

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128))
    soc: Mapped[str] = mapped_column(String(64))
    command: Mapped[str] = mapped_column(String(2000))
    environment: Mapped[dict[str, Any]]
    status: Mapped[str] = mapped_column(
        String(32), default="running"
    )  # finished, failed, interrupted, died
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]
    #: The process that runs it: a run of this host whose process is gone is marked "died".
    host: Mapped[str | None] = mapped_column(String(256))
    pid: Mapped[int | None] = mapped_column(Integer)
    pid_started: Mapped[float | None] = mapped_column(Float)


class StudyRecord(Base):
    """Our side of one Optuna study: one (op, kernel, case, soc, kernel source) search."""

    __tablename__ = "autotune_studies"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(512), unique=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    kernel: Mapped[str] = mapped_column(String(128))
    case_name: Mapped[str] = mapped_column(String(256))
    case: Mapped[dict[str, Any]]  # shape and dtype
    soc: Mapped[str] = mapped_column(String(64), index=True)
    source_hash: Mapped[str] = mapped_column(String(64))
    budget: Mapped[int] = mapped_column(Integer)
    default_config: Mapped[dict[str, Any]]
    feasible_size: Mapped[int] = mapped_column(Integer)
    strategy: Mapped[str] = mapped_column(String(32))  # "exhaustive" or "tpe"
    #: Compiler and runtime versions and the launchers' hash it ran under
    #: (autotuner.measure.toolchain).
    toolchain: Mapped[dict[str, Any] | None]
    #: How an Ascend soc compiled its configs (simd, simt) and the compiler options it searched
    #: beyond multibuffer; "simd" and none elsewhere. Another mode or options: another space.
    npu_mode: Mapped[str] = mapped_column(String(32), default="simd", server_default="simd")
    npu_options: Mapped[list[str] | None] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: Outcome of the interleaved re-timing: winner, default, their numbers, beats_default.
    verdict: Mapped[dict[str, Any] | None]
    verdict_at: Mapped[datetime | None]
    #: Completed trials the verdict was computed on: a verdict is replaced only by one computed
    #: on more (compare-and-set), so concurrent processes settle on one verdict.
    verdict_trials: Mapped[int | None] = mapped_column(Integer)

    claims: Mapped[list[Claim]] = relationship(back_populates="study", cascade="all, delete-orphan")


class Claim(Base):
    """A config taken by a worker: at most one per (study, config); `slot` numbers the budget."""

    __tablename__ = "autotune_claims"
    __table_args__ = (
        UniqueConstraint("study_id", "config_key", name="uq_claim_config"),
        UniqueConstraint("study_id", "slot", name="uq_claim_slot"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    study_id: Mapped[int] = mapped_column(
        ForeignKey("autotune_studies.id", ondelete="CASCADE"), index=True
    )
    config_key: Mapped[str] = mapped_column(String(512))
    #: Position in the trial budget; None for configs rejected by a static constraint.
    slot: Mapped[int | None] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(32))  # running, complete, failed, infeasible
    trial_number: Mapped[int | None] = mapped_column(Integer)
    worker: Mapped[str] = mapped_column(String(256))
    heartbeat_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: The owning process: a claim of a process of this host that no longer exists is re-queued
    #: at once; its start time tells a reused pid apart. Other hosts' claims go stale by heartbeat.
    host: Mapped[str | None] = mapped_column(String(256))
    pid: Mapped[int | None] = mapped_column(Integer)
    pid_started: Mapped[float | None] = mapped_column(Float)
    run_id: Mapped[int | None] = mapped_column(Integer)

    study: Mapped[StudyRecord] = relationship(back_populates="claims")


def content_hash(label: str, entries: dict[str, Any]) -> str:
    """The sha256 of a frozen version's label and entries (`FrozenVersion.content_hash`)."""
    return hashlib.sha256(json.dumps([label, entries], sort_keys=True).encode()).hexdigest()


class FrozenVersion(Base):
    """One `autotune freeze` of an op on a soc that changed something: its label and numbers."""

    __tablename__ = "autotune_frozen_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    soc: Mapped[str] = mapped_column(String(64), index=True)
    label: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    #: `content_hash(label, entries)`: a freeze that would record the same entries again records
    #: nothing, and an import recomputes it.
    content_hash: Mapped[str] = mapped_column(String(64))
    #: Per (kernel, case): config, median/p20/p80/n, default time, study, trial, environment.
    entries: Mapped[dict[str, Any]]


class Baseline(Base):
    """One timing of one part of an op (e.g. its forward) on one case and soc.

    `source` says what ran: "upstream" (upstream's kernels at their defaults or their autotune's
    pick; on a GPU this is the GPU baseline), "upstream_tma" (upstream's TMA path, where it has
    one and the GPU runs it, at its own autotune pick), "torch" (the op in torch eager, the case
    dtype), "port_default" (the port at upstream's default configs) or "port_frozen" (the port at
    the configs frozen for this soc under `label`).
    """

    __tablename__ = "autotune_baselines"
    __table_args__ = (  # the newest row per group, and lists newest first (migration 0004)
        Index(
            "ix_autotune_baselines_newest",
            "op", "soc", "case_name", "part", "source", "measured_at", "id",
        ),
        Index("ix_autotune_baselines_measured_at", "measured_at"),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    soc: Mapped[str] = mapped_column(String(64), index=True)
    case_name: Mapped[str] = mapped_column(String(256))
    part: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(32))
    label: Mapped[str | None] = mapped_column(String(64))
    #: kernel -> the config it ran: the port's kernels, or upstream's autotuned kernels (by
    #: attribute of its module) at the config its `triton.autotune` picked (empty where upstream
    #: does not tune itself); `autotune check` launches upstream at these.
    configs: Mapped[dict[str, Any]]
    median_ms: Mapped[float] = mapped_column(Float)
    p20_ms: Mapped[float] = mapped_column(Float)
    p80_ms: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer)
    samples: Mapped[list[float]]  # single-call times (ms) in the order they ran
    interpreter: Mapped[bool] = mapped_column(Boolean, default=False)  # never a performance number
    #: What measured it: "cuda" (a GPU: only these rows are GPU baselines), "npu" or "cpu" (the
    #: interpreter). Set by `autotune baseline`; rows made without it get it from soc and
    #: interpreter, as migration 0006 gave the rows before it.
    backend: Mapped[str] = mapped_column(String(16), default=lambda ctx: _backend_of(ctx))
    environment: Mapped[dict[str, Any]]
    #: The calibration probes' ms before and after the op's baseline, and the device's report
    #: of other processes (`autotuner.measure.device_load`); None on the interpreter.
    device_load: Mapped[dict[str, Any] | None]
    measured_at: Mapped[datetime] = mapped_column(default=utcnow)


class CheckVerdict(Base):
    """One `autotune check` of a frozen (case, part) against its frozen-config baseline."""

    __tablename__ = "autotune_checks"
    __table_args__ = (
        Index("ix_autotune_checks_newest", "op", "soc", "case_name", "part", "checked_at", "id"),
    )

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    soc: Mapped[str] = mapped_column(String(64), index=True)
    case_name: Mapped[str] = mapped_column(String(256))
    part: Mapped[str] = mapped_column(String(64))
    label: Mapped[str | None] = mapped_column(String(64))
    baseline_id: Mapped[int] = mapped_column(ForeignKey("autotune_baselines.id"))
    median_ms: Mapped[float] = mapped_column(Float)
    p20_ms: Mapped[float] = mapped_column(Float)
    p80_ms: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer)
    change: Mapped[float] = mapped_column(Float)  # (frozen / reference) now / at baseline - 1
    p_value: Mapped[float] = mapped_column(Float)  # that now is slower than the baseline
    threshold: Mapped[float] = mapped_column(Float)
    regressed: Mapped[bool] = mapped_column(Boolean)
    #: "ok", "regressed", or "contended": the device was shared with another process, so the
    #: ratio could hide a regression (`autotuner.measure.contention`); `contention` says why.
    outcome: Mapped[str] = mapped_column(String(16), default="ok", server_default="ok")
    contention: Mapped[str | None] = mapped_column(String(512))
    gpu_ratio: Mapped[float | None] = mapped_column(Float)  # median now / GPU baseline median
    #: The unchanged reference re-measured beside the frozen port ("upstream" or "port_default"),
    #: its median now, the frozen port's own median change (information: `change` is the change
    #: of the frozen/reference ratio) and the interleaved rounds (2: a suspect was re-measured).
    reference_source: Mapped[str | None] = mapped_column(String(32))
    reference_ms: Mapped[float | None] = mapped_column(Float)
    absolute_change: Mapped[float | None] = mapped_column(Float)
    rounds: Mapped[int] = mapped_column(Integer, default=1)
    environment: Mapped[dict[str, Any]]
    #: The calibration probes' ms before and after the measurement and the device's report of
    #: other processes (`autotuner.measure.device_load`); None on the interpreter.
    device_load: Mapped[dict[str, Any] | None]
    checked_at: Mapped[datetime] = mapped_column(default=utcnow)


class UserCase(Base):
    """A case a user named (`--shape` with lengths, or a captured workload), beside the
    repository's `cases/<op>.yaml`: so that other checkouts sharing the database find it."""

    __tablename__ = "autotune_user_cases"
    __table_args__ = (UniqueConstraint("op", "name", name="uq_user_case_name"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    name: Mapped[str] = mapped_column(String(256))
    #: The case as its cases file writes it: shape, dtype, source and its lengths (exact
    #: lengths, offsets, or a histogram).
    entry: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AccuracyResult(Base):
    """One output of one case as `autotune verify` judged it: errors against the float64 golden,
    the second reference's, the verdict, the configs the port ran and the toolchain."""

    __tablename__ = "autotune_accuracy"
    __table_args__ = (  # the newest verdict per output, and lists newest first
        Index(
            "ix_autotune_accuracy_newest",
            "op", "soc", "case_name", "output", "verified_at", "id",
        ),
        Index("ix_autotune_accuracy_verified_at", "verified_at"),
    )  # fmt: skip

    id: Mapped[int] = mapped_column(primary_key=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    soc: Mapped[str] = mapped_column(String(64), index=True)
    case_name: Mapped[str] = mapped_column(String(256))
    case: Mapped[dict[str, Any]]  # shape, dtype, kind
    output: Mapped[str] = mapped_column(String(128))
    configs: Mapped[dict[str, Any]]  # kernel -> config the port's launchers picked
    #: port / second-reference errors (MARE, MERE, RMSE, small-value counts) and their ratios.
    metrics: Mapped[dict[str, Any]]
    reference: Mapped[str] = mapped_column(String(32))  # the second reference: upstream or torch
    #: Where upstream's outputs came from when another machine made them ("on H200, saved
    #: 2026-12-04", "on H200, served by http://..."); None: upstream ran beside the port.
    reference_from: Mapped[str | None] = mapped_column(String(256), nullable=True)
    level: Mapped[str] = mapped_column(String(8))  # dual-reference level L0, L1, L2
    passed: Mapped[bool] = mapped_column(Boolean)
    mode: Mapped[str] = mapped_column(String(16))  # dual, golden (the RFC's fallback), single
    reason: Mapped[str] = mapped_column(String(1000))  # why it failed, or ""
    toolchain: Mapped[dict[str, Any]]  # autotuner.measure.environment.environment()
    verified_at: Mapped[datetime] = mapped_column(default=utcnow)


class DeviceCeiling(Base):
    """A device's measured ceilings: copy bandwidth and matmul throughput per dtype (the roofline)."""

    __tablename__ = "autotune_ceilings"

    id: Mapped[int] = mapped_column(primary_key=True)
    soc: Mapped[str] = mapped_column(String(64), index=True)
    bandwidth: Mapped[float] = mapped_column(Float)  # bytes per second of a device-to-device copy
    flops: Mapped[dict[str, Any]]  # dtype -> flops per second of a dense matmul
    environment: Mapped[dict[str, Any]]
    measured_at: Mapped[datetime] = mapped_column(default=utcnow)


class CompileRecord(Base):
    """One compile of a kernel's config for a target, without running it: the compiler's verdict
    (planned, an overflow, a crash, ...), the memory its plan uses and how long it took, kept by
    what the compiled code depends on (`autotuner.backends.compile.compile_key`), so a config
    compiled once is never compiled again for the same source, arguments, target and compiler."""

    __tablename__ = "autotune_compiles"

    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(String(64), unique=True)
    op: Mapped[str] = mapped_column(String(128), index=True)
    kernel: Mapped[str] = mapped_column(String(128))
    soc: Mapped[str] = mapped_column(String(64), index=True)
    case_name: Mapped[str] = mapped_column(String(256))  # the case it was first compiled for
    config: Mapped[dict[str, Any]]
    category: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(String(1000))
    seconds: Mapped[float] = mapped_column(Float)
    required_bits: Mapped[int | None] = mapped_column(Integer, nullable=True)
    available_bits: Mapped[int | None] = mapped_column(Integer, nullable=True)
    multibuffer_dropped: Mapped[bool] = mapped_column(Boolean)
    memory: Mapped[dict[str, Any]]  # bytes per on-chip memory the plan uses
    compiler: Mapped[str] = mapped_column(String(300))  # target and compiler version
    compiled_at: Mapped[datetime] = mapped_column(default=utcnow)
