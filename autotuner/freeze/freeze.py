"""`autotune freeze`: each (kernel, case) study's verified winner becomes a fixed config.

Three files change together, each written atomically under one lock:
`npu_atk_test/<op>_performance.json`, the frozen configs' one home (`atk.store.FrozenStore`), and
two renderings of it, the generated block of `npu_atk_test/<op>.py` and
`frozen_configs/<soc>/<op>.json` (with the freeze's label and date); and a frozen version is
recorded in the database when anything changed. Every file's new text is
computed and checked before the first one is written, so bad input writes nothing.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
from filelock import FileLock
from optuna.trial import TrialState
from sqlalchemy import select

from core.errors import UserError
from core.files import check_writable, write_files
from core.paths import atk_dir, frozen_configs_file, port_file, project_root
from core.paths import performance_json as performance_json_path
from core.socs import CPU
from ops.spec import Case, OpSpec
from storage import Database, FrozenVersion, Run, StudyRecord, optuna_storage
from storage.models import content_hash

from ..atk import performance_json
from ..atk.generated_block import replace_block
from ..atk.store import FrozenStore
from ..baseline.baseline import chosen_gpu_soc, gpu_baseline
from ..cases.store import kind_for, user_cases
from ..search.study import kernel_source_hash
from ..search.verdict import Outcome, Retimed, Verdict
from .history import previous_entry

#: A study needs this many completed trials (or its whole feasible space) before it is frozen;
#: `--force` freezes it anyway.
MIN_COMPLETED_TRIALS = 8


@dataclass
class Entry:
    """One frozen (kernel, case) with the numbers that justify it."""

    kernel: str
    case: str
    dtype: str
    shape: dict[str, int]
    config: dict[str, int]
    numbers: dict[str, Any]  # median/p20/p80/n, default time and config, speedup, provenance
    #: The study's best was within noise of the config frozen already, which stays.
    kept: bool = False
    #: The settlement's interleaved re-timing: each re-timed config with its numbers.
    retimed: tuple[Retimed, ...] = ()

    #: The entry of the label before, which this one replaces (`history.previous_entry`).
    previous: dict[str, Any] | None = None

    def frozen(self, label: str) -> dict[str, Any]:
        """The entry as the performance json and the database's frozen version hold it; its own
        label, since a section's label moves on with any of its kernels."""
        extra = {"previous": self.previous} if self.previous else {}
        return {"config": self.config, "label": label, **self.numbers, **extra}


@dataclass
class FreezeResult:
    label: str
    entries: list[Entry]
    #: "kernel case" pairs without a settled study for the current kernel source: those the
    #: port file holds a config of stay frozen as they were (`kept`), the others are not tuned.
    untuned: list[str]
    kept: list[str] = field(default_factory=list)
    #: Kept entries that had no GPU baseline and got this database's (`KeptEntries.baselines`).
    filled: list[str] = field(default_factory=list)
    changed: dict[Path, tuple[str, str]] = field(default_factory=dict)  # path -> (old, new)
    version_recorded: bool = False

    def diff(self) -> str:
        root = project_root().resolve()
        out = []
        for path, (old, new) in self.changed.items():
            resolved = path.resolve()
            name = resolved.relative_to(root) if resolved.is_relative_to(root) else path
            out.append(
                "".join(
                    difflib.unified_diff(
                        old.splitlines(True), new.splitlines(True), f"a/{name}", f"b/{name}"
                    )
                )
            )
        return "".join(out)


@dataclass
class KeptEntries:
    """The pairs frozen before without a settled study here ("kernel case"), and this database's
    GPU baseline of each single-kernel part among them, for an entry that lacks one."""

    pairs: list[str] = field(default_factory=list)
    baselines: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    #: "kernel case" of the kept entries whose missing GPU baseline `new_texts` filled.
    filled: list[str] = field(default_factory=list)


def _cases(spec: OpSpec, soc: str, db: Database) -> list[Case]:
    """The built-in cases of the soc's kind and the op's user cases."""
    kind = kind_for(soc == CPU)
    return [*spec.cases(kind), *(case for case, _ in user_cases(spec, kind, db))]


def collect(
    db: Database,
    spec: OpSpec,
    soc: str,
    force: bool,
    cases: list[Case] | None = None,
    gpu_soc: str | None = None,
) -> tuple[list[Entry], KeptEntries, list[str]]:
    """The winners of the studies of the current kernel sources on this soc (of `cases` only,
    when given); the pairs without a settled study the port file holds a config of (kept as
    they are, with the GPU baselines this database has of them), and the others (not tuned)."""
    gpu_soc = chosen_gpu_soc(db, gpu_soc)
    storage = optuna_storage(db)
    held = _held(spec, soc)
    entries, kept, untuned = [], KeptEntries(), []
    with db.sessions() as session:
        for kernel in spec.kernels:
            source = kernel_source_hash(spec, kernel)
            for case in cases or _cases(spec, soc, db):
                records = newest_studies(session, spec.name, kernel.name, case.name, soc, source)
                record = fastest(records) if records else None
                if record is None or (force and not record.verdict):  # open: the others freeze
                    pair = f"{kernel.name} {case.name}"
                    if (kernel.name, case.name) in held:
                        kept.pairs.append(pair)
                        found = _gpu_baseline_row(session, spec, kernel.name, case.name, gpu_soc)
                        if found is not None:
                            kept.baselines[(kernel.name, case.name)] = {
                                "gpu_baseline_ms": found.median_ms,
                                "gpu_baseline_soc": found.soc,
                                "date": found.measured_at.date().isoformat(),
                            }
                    else:
                        untuned.append(
                            pair
                            if record is None
                            else f"{pair} (its study has no verified winner yet)"
                        )
                    continue
                entry = _entry(session, storage, record, kernel.name, case, force)
                entry.numbers.update(_gpu_baseline(session, spec, kernel.name, case.name, gpu_soc))
                entries.append(entry)
    if not entries:
        raise UserError(
            f"nothing to freeze: no study of {spec.name} on {soc} for the current kernel sources has a verified winner (run `autotune run --op {spec.name} --soc {soc}` first)"
        )
    return entries, kept, untuned


def newest_studies(
    session, op: str, kernel: str, case: str, soc: str, source_hash: str
) -> list[StudyRecord]:
    """The newest study of each space (NPU mode and compiler options) of an (op, kernel, case,
    soc, kernel source), whatever its toolchain; newest first."""
    query = select(StudyRecord).where(
        StudyRecord.op == op,
        StudyRecord.kernel == kernel,
        StudyRecord.case_name == case,
        StudyRecord.soc == soc,
        StudyRecord.source_hash == source_hash,
    )
    newest: dict[tuple, StudyRecord] = {}
    for record in session.scalars(
        query.order_by(StudyRecord.created_at.desc(), StudyRecord.id.desc())
    ):
        newest.setdefault((record.npu_mode, tuple(record.npu_options or ())), record)
    return list(newest.values())


def fastest(records: list[StudyRecord]) -> StudyRecord:
    """Of the studies of one (kernel, case, soc) in several spaces (SIMD and SIMT code, say), the
    one whose verified winner re-timed fastest; the newest where none has a verdict yet (freezing
    it then says so). The winners of different modes were re-timed in their own runs, each
    interleaved with its own default, on the same soc."""
    settled = [r for r in records if r.verdict]
    return min(settled, key=_winner_ms) if settled else records[0]


def _winner_ms(record: StudyRecord) -> float:
    verdict = Verdict.of(record.verdict)
    assert verdict is not None
    return verdict.winner_ms


def _entry(session, storage, record: StudyRecord, kernel: str, case, force: bool) -> Entry:
    verdict = Verdict.of(record.verdict)
    if verdict is None:
        raise UserError(
            f"study {record.name} has no verified winner yet (its budget is not spent); finish it with `autotune run` first, or freeze the others with --force"
        )
    complete = [
        t
        for t in optuna.load_study(study_name=record.name, storage=storage).get_trials(
            deepcopy=False
        )
        if t.state == TrialState.COMPLETE
    ]
    needed = min(MIN_COMPLETED_TRIALS, record.feasible_size)
    if len(complete) < needed and not force:
        raise UserError(
            f"study {record.name} has {len(complete)} completed trials, fewer than the minimum {needed}; tune more or freeze with --force"
        )
    winner = next((t for t in complete if t.number == verdict.winner_trial), None)
    retimed = verdict.winner_retimed
    run_id = winner.user_attrs.get("run_id") if winner else None
    run = session.get(Run, run_id) if run_id else None
    numbers = {
        "median_ms": verdict.winner_ms,
        "p20_ms": retimed.p20_ms if retimed else None,
        "p80_ms": retimed.p80_ms if retimed else None,
        "n": retimed.n if retimed else None,
        "default_config": record.default_config,
        "default_ms": verdict.default_median_ms,
        "speedup_over_default": verdict.speedup,
        "beats_default": verdict.beats_default,
        "study": record.name,
        "trial": verdict.winner_trial,
        "completed_trials": len(complete),
        "tuned_at": record.verdict_at.date().isoformat() if record.verdict_at else None,
        "environment": run.environment if run else {},
        "toolchain": record.toolchain or {},
    }
    kept = verdict.outcome is Outcome.FROZEN_KEPT
    return Entry(
        kernel, case.name, case.dtype, dict(case.shape), dict(verdict.winner), numbers, kept,
        verdict.retimed,
    )  # fmt: skip


def _gpu_baseline(
    session, spec: OpSpec, kernel: str, case: str, gpu_soc: str | None
) -> dict[str, Any]:
    """The GPU baseline of the part that is this kernel alone, when there is one."""
    row = _gpu_baseline_row(session, spec, kernel, case, gpu_soc)
    return {
        "gpu_baseline_ms": row.median_ms if row else None,
        "gpu_baseline_soc": row.soc if row else None,
    }


def _gpu_baseline_row(session, spec: OpSpec, kernel: str, case: str, gpu_soc: str | None):
    """The newest upstream row on a GPU of the part that is this kernel alone, if any."""
    part = next((name for name, kernels in spec.parts.items() if kernels == (kernel,)), None)
    return gpu_baseline(session, spec.name, case, part, gpu_soc) if part else None


def _kept_gpu_baseline(
    numbers: dict[str, Any], old: dict[str, Any] | None, old_section: dict[str, Any] | None
) -> dict[str, Any]:
    """Where this database has no GPU baseline of the part, the one the replaced entry holds,
    with the label and date it came with (`gpu_baseline_from`): upstream at its defaults does not
    change with the port's config, and a freeze from a database without baselines (a re-tune's)
    should not blank it."""
    if numbers.get("gpu_baseline_ms") is not None or not old or old.get("gpu_baseline_ms") is None:
        return {}
    assert old_section is not None
    source = old.get("gpu_baseline_from") or {
        "label": old.get("label") or old_section.get("label"),
        "date": old_section.get("date"),
    }
    return {
        "gpu_baseline_ms": old["gpu_baseline_ms"],
        "gpu_baseline_soc": old.get("gpu_baseline_soc"),
        "gpu_baseline_from": source,
    }


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8") if path.exists() else ""


def _held(spec: OpSpec, soc: str) -> set[tuple[str, str]]:
    """(kernel, case) pairs frozen on `soc`."""
    return {(e.kernel, e.case) for e in FrozenStore.read(spec.name).on(soc)}


def new_texts(
    spec: OpSpec,
    soc: str,
    label: str,
    entries: list[Entry],
    kept_entries: KeptEntries | None = None,
) -> dict[Path, str]:
    """The new text of each file; UserError (and nothing written) if a file is damaged: the
    performance json with the entries, and the port's block and `frozen_configs/` rendered from
    it (`FrozenStore.block`). Notes in each entry the record of the entry it replaces
    (`Entry.previous`), which the frozen version of the database holds too. A kept entry without a GPU baseline gets this database's, if any,
    with the label of this freeze and the date it was measured (`gpu_baseline_from`); upstream
    at its defaults does not change with the port's config."""
    perf_path = performance_json_path(spec.name)
    document = performance_json.read(perf_path)
    sections = performance_json.frozen_sections(document)
    extra = performance_json.extra_cases(document)
    performance_names = {c.name for c in spec.cases("performance")}
    extra.update(
        {
            e.case: {"shape": e.shape, "dtype": e.dtype}
            for e in entries
            if e.case not in performance_names
        }
    )
    date = max((e.numbers["tuned_at"] or "" for e in entries), default="")
    for entry in entries:  # each entry's record of the one it replaces, before any section moves on
        old_section = sections.get(entry.case, {}).get(soc)
        old = old_section["kernels"].get(entry.kernel) if old_section else None
        entry.previous = previous_entry(old, old_section, label, entry.config, entry.retimed)
        entry.numbers.update(_kept_gpu_baseline(entry.numbers, old, old_section))
    for entry in entries:
        section = sections.setdefault(entry.case, {}).setdefault(
            soc, {"label": label, "date": date, "kernels": {}}
        )
        section.update(label=label, date=date)
        section["kernels"][entry.kernel] = entry.frozen(label)
    for (kernel, case), found in (kept_entries.baselines if kept_entries else {}).items():
        held = sections.get(case, {}).get(soc, {}).get("kernels", {}).get(kernel)
        if held is not None and held.get("gpu_baseline_ms") is None:
            held.update(
                gpu_baseline_ms=found["gpu_baseline_ms"],
                gpu_baseline_soc=found["gpu_baseline_soc"],
                gpu_baseline_from={"label": label, "date": found["date"]},
            )
            kept_entries.filled.append(f"{kernel} {case}")
    perf_text = performance_json.render(spec, sections, extra)
    frozen = FrozenStore.of(spec.name, json.loads(perf_text)).block()
    kernel_path = port_file(spec.name)
    kernel_text = replace_block(_read(kernel_path), frozen, kernel_path)
    configs_text = (
        json.dumps(
            {
                "op": spec.name,
                "soc": soc,
                "label": label,
                "date": date,
                "frozen": dict(sorted(frozen.get(soc, {}).items())),  # as the block lists them
            },
            indent=2,
        )
        + "\n"
    )
    return {
        kernel_path: kernel_text,
        perf_path: perf_text,
        frozen_configs_file(soc, spec.name): configs_text,
    }


def _latest_version(session, op: str, soc: str) -> FrozenVersion | None:
    query = select(FrozenVersion).where(FrozenVersion.op == op, FrozenVersion.soc == soc)
    return session.scalars(query.order_by(FrozenVersion.id.desc())).first()


def latest_label(db: Database, op: str, soc: str) -> str | None:
    with db.sessions() as session:
        version = _latest_version(session, op, soc)
        return version.label if version else None


def freeze(
    db: Database,
    spec: OpSpec,
    soc: str,
    *,
    label: str | None,
    dry_run: bool,
    force: bool,
    cases: list[Case] | None = None,
    gpu_soc: str | None = None,
) -> FreezeResult:
    label = label or latest_label(db, spec.name, soc) or "M1"
    entries, kept, untuned = collect(db, spec, soc, force, cases, gpu_soc)
    result = FreezeResult(label, entries, untuned, kept.pairs)
    if not dry_run:  # before the lock file is made beside them
        targets = (
            port_file(spec.name),
            performance_json_path(spec.name),
            frozen_configs_file(soc, spec.name),
        )
        check_writable(targets)
    with FileLock(str(atk_dir(spec.name) / ".freeze.lock")):
        for path, text in new_texts(spec, soc, label, entries, kept).items():
            old = _read(path)
            if old != text:
                result.changed[path] = (old, text)
        result.filled = kept.filled
        if dry_run:
            return result
        write_files({path: text for path, (_, text) in result.changed.items()})
        result.version_recorded = _record_version(db, spec.name, soc, label, entries)
    return result


def _record_version(db: Database, op: str, soc: str, label: str, entries: list[Entry]) -> bool:
    content = {f"{e.kernel} {e.case}": e.frozen(label) for e in entries}
    digest = content_hash(label, content)
    with db.sessions() as session:
        latest = _latest_version(session, op, soc)
        if latest is not None and latest.content_hash == digest:
            return False
        session.add(
            FrozenVersion(op=op, soc=soc, label=label, content_hash=digest, entries=content)
        )
        session.commit()
        return True
