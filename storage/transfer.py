"""`autotune export` / `autotune import`: baselines, frozen versions, verify's verdicts and device
ceilings between databases.

The file is versioned JSON: {"format": "autotune-export", "version": 2, "exported_at": ...,
"baselines": [...], "frozen_versions": [...], "accuracy": [...], "ceilings": [...]}, every column
but the database's own ids, times with their timezone. Version 1 files (no accuracy, no
ceilings) are still read. An import is checked whole before anything is written (the first
problem is one line naming its place, e.g. `baselines[3].median_ms: ...`): its form and each
frozen version's content hash here, what the rows name (ops, kernels, cases, socs, configs) by
the caller's `check`. It runs in one transaction and is idempotent: a row whose natural key is
already there is skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from sqlalchemy import select

from core.errors import UserError
from core.files import write_files
from core.socs import BackendKind

from .db import Database
from .models import (
    AccuracyResult,
    Baseline,
    DeviceCeiling,
    FrozenVersion,
    content_hash,
    measuring_backend,
)

FORMAT = "autotune-export"
VERSION = 2
#: Versions this autotune reads: 1 lacks `accuracy` and `ceilings`.
READS = (1, 2)


def _finite(value: Any) -> Any:
    """Refuse NaN and infinities anywhere in a JSON value (PostgreSQL's JSON cannot hold them)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"non-finite number {value}")
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    )
    for child in children:
        _finite(child)
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_finite)]
# Strings in the file are ISO 8601 times; a time without a timezone is refused.
Time = Annotated[AwareDatetime, Field(strict=False)]
#: A backend kind by its name ("cuda", "npu", "cpu").
Kind = Annotated[BackendKind, Field(strict=False)]


class _Record(BaseModel):
    # Strict: a string where a number belongs is an error, not a conversion.
    model_config = ConfigDict(strict=True, extra="forbid", allow_inf_nan=False)


class BaselineRecord(_Record):
    op: str = Field(max_length=128)
    soc: str = Field(max_length=64)
    case_name: str = Field(max_length=256)
    part: str = Field(max_length=64)
    source: Literal["upstream", "upstream_tma", "torch", "port_default", "port_frozen"]
    label: str | None = Field(max_length=64)
    configs: JsonObject
    median_ms: float
    p20_ms: float
    p80_ms: float
    n: int = Field(ge=1)
    samples: list[float] = Field(min_length=1)
    interpreter: bool
    #: Exports made before it was recorded leave it out; it follows from soc and interpreter.
    backend: Kind | None = None
    environment: JsonObject
    #: Exports made before it was recorded leave it out (`Baseline.device_load`).
    device_load: JsonObject | None = None
    measured_at: Time

    @model_validator(mode="after")
    def _backend(self) -> BaselineRecord:
        if self.backend is None:
            self.backend = measuring_backend(self.soc, self.interpreter)
        return self


class FrozenVersionRecord(_Record):
    op: str = Field(max_length=128)
    soc: str = Field(max_length=64)
    label: str = Field(max_length=64)
    created_at: Time
    content_hash: str = Field(max_length=64)
    entries: JsonObject


class AccuracyRecord(_Record):
    op: str = Field(max_length=128)
    soc: str = Field(max_length=64)
    case_name: str = Field(max_length=256)
    case: JsonObject
    output: str = Field(max_length=128)
    configs: JsonObject
    metrics: JsonObject
    reference: str = Field(max_length=32)
    reference_from: str | None = Field(None, max_length=256)  # absent before it was recorded
    level: Literal["L0", "L1", "L2"]
    passed: bool
    mode: Literal["dual", "golden", "single"]
    reason: str = Field(max_length=1000)
    toolchain: JsonObject
    verified_at: Time


class CeilingRecord(_Record):
    soc: str = Field(max_length=64)
    bandwidth: float = Field(gt=0)
    flops: JsonObject
    environment: JsonObject
    measured_at: Time


class ExportDocument(_Record):
    format: Literal["autotune-export"]
    version: Literal[1, 2]
    exported_at: Time
    baselines: list[BaselineRecord]
    frozen_versions: list[FrozenVersionRecord]
    accuracy: list[AccuracyRecord] = []
    ceilings: list[CeilingRecord] = []

    @model_validator(mode="before")
    @classmethod
    def _sections_of_the_version(cls, data: Any) -> Any:
        """Version 2 has every section; version 1 none of the later ones."""
        later = ("accuracy", "ceilings")
        if isinstance(data, dict) and data.get("version") == 1:
            extra = [name for name in later if name in data]
            if extra:
                raise ValueError(f"version 1 has no {extra[0]!r}")
        return data


@dataclass(frozen=True)
class ImportResult:
    baselines_added: int
    baselines_skipped: int
    versions_added: int
    versions_skipped: int
    accuracy_added: int = 0
    accuracy_skipped: int = 0
    ceilings_added: int = 0
    ceilings_skipped: int = 0

    @property
    def added(self) -> int:
        return (
            self.baselines_added + self.versions_added + self.accuracy_added + self.ceilings_added
        )

    @property
    def skipped(self) -> int:
        return (
            self.baselines_skipped
            + self.versions_skipped
            + self.accuracy_skipped
            + self.ceilings_skipped
        )


def _utc(moment: datetime) -> datetime:
    """SQLite hands back naive times (stored in UTC); PostgreSQL aware ones."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _record(model: type[_Record], row: Any) -> dict[str, Any]:
    values = {name: getattr(row, name) for name in model.model_fields}
    values = {k: _utc(v) if isinstance(v, datetime) else v for k, v in values.items()}
    return model.model_validate(values).model_dump(mode="json")


def export_document(db: Database, ops: list[str] | None, soc: str | None) -> dict[str, Any]:
    """The rows of these ops (all if none) and soc (any if None); the ceilings of the soc."""
    baselines = select(Baseline).order_by(Baseline.measured_at, Baseline.id)
    versions = select(FrozenVersion).order_by(FrozenVersion.created_at, FrozenVersion.id)
    accuracy = select(AccuracyResult).order_by(AccuracyResult.verified_at, AccuracyResult.id)
    ceilings = select(DeviceCeiling).order_by(DeviceCeiling.measured_at, DeviceCeiling.id)
    if ops:
        baselines = baselines.where(Baseline.op.in_(ops))
        versions = versions.where(FrozenVersion.op.in_(ops))
        accuracy = accuracy.where(AccuracyResult.op.in_(ops))
    if soc:
        baselines = baselines.where(Baseline.soc == soc)
        versions = versions.where(FrozenVersion.soc == soc)
        accuracy = accuracy.where(AccuracyResult.soc == soc)
        ceilings = ceilings.where(DeviceCeiling.soc == soc)
    with db.sessions() as session:
        return {
            "format": FORMAT,
            "version": VERSION,
            "exported_at": datetime.now(UTC).isoformat(),
            "baselines": [_record(BaselineRecord, r) for r in session.scalars(baselines)],
            "frozen_versions": [_record(FrozenVersionRecord, r) for r in session.scalars(versions)],
            "accuracy": [_record(AccuracyRecord, r) for r in session.scalars(accuracy)],
            "ceilings": [_record(CeilingRecord, r) for r in session.scalars(ceilings)],
        }


def _location(loc: tuple[str | int, ...]) -> str:
    """('baselines', 3, 'median_ms') -> `baselines[3].median_ms`."""
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def parse_document(document: Any) -> ExportDocument:
    """The checked document; UserError naming the first problem."""
    if not isinstance(document, dict):
        raise UserError(
            f"not an autotune export: expected a JSON object, got {type(document).__name__}"
        )
    if document.get("format") != FORMAT:
        raise UserError(
            f"not an autotune export: format is {document.get('format')!r}, expected {FORMAT!r}"
        )
    if document.get("version") not in READS:
        raise UserError(
            f"unsupported export version {document.get('version')!r}; this autotune reads "
            f"versions {', '.join(map(str, READS))}"
        )
    try:
        parsed = ExportDocument.model_validate(document)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = _location(error["loc"])
        raise UserError(f"{where}: {error['msg']}" if where else error["msg"]) from None
    for i, version in enumerate(parsed.frozen_versions):
        digest = content_hash(version.label, version.entries)
        if version.content_hash != digest:
            raise UserError(
                f"frozen_versions[{i}].content_hash: {version.content_hash!r} is not the hash of "
                f"its label and entries ({digest})"
            )
    return parsed


def _baseline_key(row: Baseline | BaselineRecord) -> tuple:
    return (row.op, row.soc, row.case_name, row.part, row.source, row.label, _utc(row.measured_at))


def _version_key(row: FrozenVersion | FrozenVersionRecord) -> tuple:
    return (row.op, row.soc, row.label, row.content_hash, _utc(row.created_at))


def _accuracy_key(row: AccuracyResult | AccuracyRecord) -> tuple:
    return (row.op, row.soc, row.case_name, row.output, row.level, _utc(row.verified_at))


def _ceiling_key(row: DeviceCeiling | CeilingRecord) -> tuple:
    return (row.soc, _utc(row.measured_at))


#: What the caller checks of a parsed export before anything is written: UserError naming the
#: first row it refuses (`autotuner.freeze.import_check`: what this checkout knows).
Check = Callable[[ExportDocument, Database], None]


def import_document(db: Database, document: Any, check: Check) -> ImportResult:
    """Add the rows of an export that are not there yet, in one transaction; nothing if invalid
    or refused by `check`."""
    parsed = parse_document(document)
    check(parsed, db)
    ops = sorted({r.op for r in [*parsed.baselines, *parsed.frozen_versions, *parsed.accuracy]})
    socs = sorted({r.soc for r in parsed.ceilings})
    sections = (  # (table, records, natural key, rows of the database that may hold it)
        (Baseline, parsed.baselines, _baseline_key, Baseline.op.in_(ops)),
        (FrozenVersion, parsed.frozen_versions, _version_key, FrozenVersion.op.in_(ops)),
        (AccuracyResult, parsed.accuracy, _accuracy_key, AccuracyResult.op.in_(ops)),
        (DeviceCeiling, parsed.ceilings, _ceiling_key, DeviceCeiling.soc.in_(socs)),
    )
    counts = []
    with db.sessions() as session:
        for table, records, key, where in sections:
            seen = {key(r) for r in session.scalars(select(table).where(where))}
            rows = _new_rows(table, records, key, seen)
            session.add_all(rows)
            counts += [len(rows), len(records) - len(rows)]
        session.commit()
    return ImportResult(*counts)


def _new_rows(
    table: type, records: list[Any], key: Callable[[Any], tuple], seen: set[tuple]
) -> list[Any]:
    """Rows for the records whose key is not in `seen` (nor earlier in the file)."""
    rows = []
    for record in records:
        if key(record) not in seen:
            seen.add(key(record))
            rows.append(table(**record.model_dump()))
    return rows


def write_export(path: Path, document: dict[str, Any]) -> None:
    """Write atomically: a reader never sees half a file, a failure leaves the old one."""
    write_files({path: json.dumps(document, indent=1, allow_nan=False) + "\n"})


def read_export(path: Path) -> Any:
    """The JSON of a file; UserError if unreadable or not JSON."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UserError(f"{path} is not UTF-8 text, so not an autotune export") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc}") from None
