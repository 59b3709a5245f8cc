"""The overview rows: per (op, soc, case, part) the frozen time, the GPU baseline, the check and
the newest accuracy verdict of the case."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from autotuner.report import outcomes
from autotuner.report.frozen import (
    DATABASE,
    RepositoryVersion,
    repository_stamp,
    repository_versions,
)
from autotuner.report.roofline import from_row, share
from core.socs import CPU
from ops import all_ops
from ops.spec import Case
from storage import AccuracyResult, Baseline, CheckVerdict, DeviceCeiling, FrozenVersion

from . import newest
from .schemas import AccuracyCell, BaselineOut, CaseOut, CheckOut, FrozenKernelOut

#: (op, soc, case, part)
Key = tuple[str, str, str, str]
#: The part of the rows of cases that have verdicts only (no frozen config, baseline or check).
ALL_PARTS = "-"


def _part_of(parts: dict[str, tuple[str, ...]], kernel: str) -> str:
    return next((part for part, kernels in parts.items() if kernel in kernels), kernel)


def _config_changed(op: str, kernel: str, old: dict | None, new: dict | None) -> bool | None:
    if old is None or new is None:
        return None
    try:
        return not all_ops()[op].kernel(kernel).same_launch(old, new)
    except (KeyError, ValueError):  # an op or kernel this checkout no longer has
        return old != new


def _kernel(op: str, kernel: str, entry: dict[str, Any]) -> FrozenKernelOut:
    previous = entry.get("previous")
    if isinstance(previous, dict):
        changed = _config_changed(op, kernel, previous.get("config"), entry.get("config"))
        previous = {**previous, "config_changed": changed}
    return FrozenKernelOut(
        kernel=kernel,
        config=entry.get("config") or {},
        median_ms=entry.get("median_ms"),
        default_ms=entry.get("default_ms"),
        speedup_over_default=entry.get("speedup_over_default"),
        beats_default=entry.get("beats_default"),
        gpu_baseline_ms=entry.get("gpu_baseline_ms"),
        gpu_baseline_soc=entry.get("gpu_baseline_soc"),
        study=entry.get("study"),
        trial=entry.get("trial"),
        label=entry.get("label"),
        previous=previous,
    )


def _total(values: list[float | None]) -> float | None:
    return sum(values) if values and None not in values else None


#: (op, soc) -> (data version, rows): the rows change only when one of their tables grows.
_CACHE: dict[tuple[str | None, str | None], tuple[tuple, list[CaseOut]]] = {}
_CACHE_SIZE = 256


def _data_version(session: Session, root: Path | None) -> tuple:
    """The newest id of each table the rows come from (rows are only ever added), and the
    modification times of the checkout's performance json files."""
    tables = (FrozenVersion, Baseline, CheckVerdict, AccuracyResult, DeviceCeiling)
    newest = [select(func.max(m.id)).scalar_subquery() for m in tables]
    stamp = (str(root), *repository_stamp(root))
    return (str(session.get_bind().url), *session.execute(select(*newest)).one(), stamp)


def case_rows(
    session: Session, root: Path | None, op: str | None = None, soc: str | None = None
) -> list[CaseOut]:
    """Every (op, soc, case, part) with a frozen entry (of the database, else of the checkout
    `root`), a baseline or a check, sorted; rebuilt only when the data changed (the overview of a
    large campaign takes a few hundred ms)."""
    version = _data_version(session, root)
    cached = _CACHE.get((op, soc))
    if cached and cached[0] == version:
        return cached[1]
    rows = _build_rows(session, root, op, soc)
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[(op, soc)] = (version, rows)
    return rows


def _build_rows(
    session: Session, root: Path | None, op: str | None, soc: str | None
) -> list[CaseOut]:
    kernels: dict[Key, list[FrozenKernelOut]] = defaultdict(list)
    versions: dict[Key, FrozenVersion | RepositoryVersion] = {}
    baselines: dict[Key, list[BaselineOut]] = defaultdict(list)
    checks: dict[Key, CheckOut] = {}
    parts = {name: spec.parts for name, spec in all_ops().items()}
    # The database's frozen versions first: a case they hold overrides the checkout's entry.
    stored = newest.frozen_versions(session, op, soc)
    for version in [*stored, *repository_versions(root, op, soc)]:
        op_parts = parts.get(version.op, {})
        for name, entry in version.entries.items():
            kernel, _, case = name.partition(" ")
            key = (version.op, version.soc, case, _part_of(op_parts, kernel))
            if versions.setdefault(key, version) is version:
                kernels[key].append(_kernel(version.op, kernel, entry))
    for row in newest.baselines(session, op, soc):
        key = (row.op, row.soc, row.case_name, row.part)
        baselines[key].append(BaselineOut.model_validate(row))
    for row in session.scalars(newest.checks_query(op, soc, only_regressed=False)):
        checks[(row.op, row.soc, row.case_name, row.part)] = CheckOut.model_validate(row)
    gpu = {(r.op, r.case_name, r.part): r for r in newest.gpu_baselines(session, op)}
    verdicts = accuracy_cells(session, op, soc)
    ceilings = {name: from_row(row) for name, row in newest.ceilings(session).items()}
    specs = all_ops()
    known_cases: dict[str, dict[str, Case]] = {}  # op -> case name -> case, made when needed
    measured = {(k[0], k[1], k[2]) for k in (*kernels, *baselines, *checks)}
    only_verdicts = {(*case, ALL_PARTS) for case in verdicts if case not in measured}

    rows = []
    keys = {*kernels, *baselines, *checks, *only_verdicts}
    for key in sorted(keys, key=lambda k: (k[0], k[2], k[1], k[3])):
        op_name, soc_name, case, part = key
        frozen = sorted(kernels.get(key, []), key=lambda k: k.kernel)
        wanted = parts.get(op_name, {}).get(part, (part,))
        complete = {k.kernel for k in frozen} >= set(wanted)
        frozen_ms = _total([k.median_ms for k in frozen]) if complete else None
        default_ms = _total([k.default_ms for k in frozen]) if complete else None
        interpreter = soc_name == CPU or any(b.interpreter for b in baselines.get(key, []))
        version = versions.get(key)
        source = _source(version)
        speedup = gpu_ms = gpu_soc = gpu_source = ratio = reached = None
        if not interpreter:
            if len(frozen) == 1:
                speedup = frozen[0].speedup_over_default
            else:
                speedup = outcomes.speedup(default_ms, frozen_ms)
            upstream = gpu.get((op_name, case, part))
            if upstream:
                gpu_ms, gpu_soc, gpu_source = upstream.median_ms, upstream.soc, DATABASE
            elif len(frozen) == 1 and frozen[0].gpu_baseline_ms:  # recorded at freeze time
                gpu_ms, gpu_soc = frozen[0].gpu_baseline_ms, frozen[0].gpu_baseline_soc
                gpu_source = source
            ratio = frozen_ms / gpu_ms if frozen_ms and gpu_ms else None
            if frozen_ms and op_name in specs and soc_name in ceilings:
                spec = specs[op_name]
                if op_name not in known_cases:
                    every = [*spec.cases("accuracy"), *spec.cases("performance")]
                    known_cases[op_name] = {c.name: c for c in every}
                if case in known_cases[op_name]:
                    reached = share(spec, known_cases[op_name][case], part, frozen_ms,
                                    ceilings[soc_name])  # fmt: skip
        rows.append(
            CaseOut(
                op=op_name,
                soc=soc_name,
                case_name=case,
                part=part,
                interpreter=interpreter,
                label=version.label if version else None,
                frozen_at=version.created_at if version else None,
                source=source,
                kernels=frozen,
                frozen_ms=frozen_ms,
                default_ms=default_ms,
                speedup_over_default=speedup,
                gpu_baseline_ms=gpu_ms,
                gpu_baseline_soc=gpu_soc,
                gpu_baseline_source=gpu_source,
                ratio_to_gpu=ratio,
                roofline=reached.bound if reached else None,
                roofline_bound=reached.bound_by if reached else None,
                baselines=sorted(baselines.get(key, []), key=lambda b: b.source),
                check=checks.get(key),
                accuracy=verdicts.get((op_name, soc_name, case)),
            )
        )
    return rows


def _source(version: FrozenVersion | RepositoryVersion | None) -> str | None:
    """Where a row's frozen config and times come from."""
    if isinstance(version, RepositoryVersion):
        return version.source
    return DATABASE if version is not None else None


def accuracy_cells(
    session: Session, op: str | None, soc: str | None
) -> dict[tuple[str, str, str], AccuracyCell]:
    """(op, soc, case) -> the newest verdicts of its outputs, together."""
    outputs: dict[tuple[str, str, str], list[AccuracyResult]] = defaultdict(list)
    query = newest.accuracy_query(op, soc, None, None, latest=True)
    for row in session.scalars(query):
        outputs[(row.op, row.soc, row.case_name)].append(row)
    return {
        key: AccuracyCell(
            passed=all(r.passed for r in rows),
            outputs=len(rows),
            failed=[f"{r.output}: {r.reason}" for r in rows if not r.passed],
            verified_at=max(r.verified_at for r in rows),
            reference_from=sorted({r.reference_from for r in rows if r.reference_from}),
        )
        for key, rows in outputs.items()
    }
