"""What an import may add (`autotune import`, `POST /api/import`): every row of an export checked
against this checkout before anything is written.

A row's op, kernels, case and soc must exist here; each config must lie in its kernel's search
space on that soc (`space_for`: its keys and values) and pass what a compiler cannot judge
(`KernelSpec.launch_violation`: the launch limits and the op's constraints; the on-chip memory
model is left out, since the compiler, not the model, decides what fits); its times must be
positive. The form of the file and each frozen version's content hash are checked before, by
`storage.transfer.parse_document`. The first row refused is one line naming it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.errors import UserError
from core.socs import CPU, BackendKind, socs_of
from ops import get_op
from ops.npu_tunables import SIMT_ONLY
from ops.spec import Case, KernelSpec, OpSpec
from storage import Database
from storage.transfer import (
    AccuracyRecord,
    BaselineRecord,
    CeilingRecord,
    ExportDocument,
    FrozenVersionRecord,
    ImportResult,
    import_document,
)

from ..backends import SocProfile, soc_profile
from ..backends.npu_options import OPTIONS
from ..cases.store import find, kind_for
from ..search.space import SearchSpace, space_for


def import_export(db: Database, document: Any) -> ImportResult:
    """Add an export's rows that are not there yet; UserError naming the first row refused."""
    return import_document(db, document, refuse_unknown)


def refuse_unknown(document: ExportDocument, db: Database) -> None:
    """UserError naming the first row of the document this checkout does not know."""
    known = _Known(db)
    for where, row in _rows(document):
        try:
            reason = _problem(row, known)
        except UserError as exc:  # an unknown soc, an option the soc cannot vary
            reason = str(exc)
        if reason:
            raise UserError(f"{where}: {reason}")


Record = BaselineRecord | FrozenVersionRecord | AccuracyRecord | CeilingRecord


def _rows(document: ExportDocument) -> Iterator[tuple[str, Record]]:
    sections = ("baselines", "frozen_versions", "accuracy", "ceilings")
    for section in sections:
        for i, row in enumerate(getattr(document, section)):
            yield f"{section}[{i}]", row


@dataclass
class _Known:
    """The cases this checkout and its database know, each looked up once."""

    db: Database
    cases: dict[tuple[str, str, bool], tuple[Case | None, str | None]] = field(default_factory=dict)

    def case(self, spec: OpSpec, name: str, soc: str) -> tuple[Case | None, str | None]:
        """The op's case of that name (built in, or a user case), else why not."""
        key = (spec.name, name, soc == CPU)
        if key not in self.cases:
            try:
                self.cases[key] = find(spec, name, kind_for(soc == CPU), self.db), None
            except ValueError as exc:
                self.cases[key] = None, str(exc)
        return self.cases[key]


def _problem(row: Record, known: _Known) -> str | None:
    """Why this checkout refuses the row, or None."""
    soc_profile(row.soc)  # UserError for an unknown soc
    if isinstance(row, CeilingRecord):
        return next(
            (f"flops.{k}: {v} is not positive" for k, v in row.flops.items() if not v > 0), None
        )
    try:
        spec = get_op(row.op)
    except ValueError as exc:
        return str(exc)
    if isinstance(row, FrozenVersionRecord):  # "kernel case" -> entry
        for key, entry in row.entries.items():
            kernel, _, case = key.partition(" ")
            reason = _not_positive(entry) or _config_problem(
                known, spec, kernel, case, entry.get("config"), row.soc
            )
            if reason:
                return f"entries[{key!r}]: {reason}"
        return None
    if isinstance(row, BaselineRecord):
        times = {"median_ms": row.median_ms, "p20_ms": row.p20_ms, "p80_ms": row.p80_ms}
        reason = _not_positive(times) or next(
            (f"samples[{i}]: {v} is not positive" for i, v in enumerate(row.samples) if v <= 0),
            None,
        )
        if reason:
            return reason
    unknown_case = known.case(spec, row.case_name, row.soc)[1]
    if unknown_case:
        return unknown_case
    for kernel, config in row.configs.items():
        reason = _config_problem(known, spec, kernel, row.case_name, config, row.soc)
        if reason:
            return f"configs[{kernel!r}]: {reason}"
    return None


def _not_positive(values: dict[str, Any]) -> str | None:
    """The first time (a number under a `*_ms` key, nested ones too) that is not positive."""
    for key, value in values.items():
        if key.endswith("_ms") and _number(value) and value <= 0:
            return f"{key}: {value} is not positive"
        if isinstance(value, dict):
            reason = _not_positive(value)
            if reason:
                return f"{key}.{reason}"
    return None


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _config_problem(
    known: _Known, spec: OpSpec, kernel_name: str, case_name: str, config: Any, soc: str
) -> str | None:
    """Why `config` is not one of the kernel's configs for the case on the soc, or None."""
    try:
        kernel = spec.kernel(kernel_name)
    except ValueError as exc:
        return str(exc)
    case, reason = known.case(spec, case_name, soc)
    if case is None:
        return reason
    if not isinstance(config, dict):
        return f"the config is {config!r}, not an object"
    profile = _profile(soc, config)
    space = space_for(kernel, profile.launch_options, profile.option_defaults)
    default = _default(space, kernel, case)
    if config.items() <= default.items():
        return None  # upstream's default (or part of it) runs as it is, inside the space or not
    names = [t.name for t in space.tunables]
    unknown = [key for key in config if key not in names]
    if unknown:
        return f"{unknown[0]} is not a tunable of {kernel.name} on {soc}; its tunables: " + (
            ", ".join(names)
        )
    for t in space.tunables:
        if t.name in config and not _one_of(config[t.name], t.values):
            return f"{t.name}={config[t.name]!r} is outside {list(t.values)}"
    try:
        complete = space.complete(config)
    except ValueError as exc:  # names no value of a tunable without a default
        return str(exc)
    return kernel.launch_violation(complete, case, profile.limits)


def _default(space: SearchSpace, kernel: KernelSpec, case: Case) -> dict[str, Any]:
    """Upstream's default config for the case, with the space's launch options at theirs."""
    try:
        return space.complete(kernel.default(case))
    except ValueError:  # the default names no value of a tunable without a default
        return kernel.default(case)


def _one_of(value: Any, values: tuple) -> bool:
    """`value` is one of `values`, of the same type (True is not 1 here)."""
    return any(value == v and type(value) is type(v) for v in values)


def _profile(soc: str, config: dict[str, Any]) -> SocProfile:
    """The soc's profile in the mode and with the compiler options the config names."""
    if soc not in socs_of(BackendKind.NPU):
        return soc_profile(soc)
    mode = "simt" if SIMT_ONLY.name in config else "simd"
    options = tuple(key for key in config if key in OPTIONS)
    return soc_profile(soc, mode, options)
