"""User cases: an op's shape and dtype with the user's lengths, kept in `cases/<op>.yaml`.

An entry of a cases file gives its lengths one way: `lengths` (a lengths file, a seeded
distribution, offsets that are their running sums), `offsets` as the port's launcher takes them
(a jagged2 op's sums of L_b^2, say) or a `histogram` of lengths (what `autotune.capture` records),
whose B lengths are its quantiles at the low-discrepancy points the built-in cases use. A case is
named as the op names its shape and dtype, then `_u` and, for a jagged op, 8 hex digits of a hash
of its lengths (a dense op's shape and dtype are all its data): the same data always gets the
same name, and different data never shares a frozen entry.

The repository's file is what a checkout tunes, freezes and checks; the database keeps a copy of
every entry, so that a checkout sharing the database finds the cases registered elsewhere.
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import itertools
import json
import re
from pathlib import Path
from typing import Any

import yaml
from filelock import FileLock
from sqlalchemy import select

from core.errors import UserError
from core.files import check_writable, write_files
from core.paths import cases_file
from ops.jagged import golden_points
from ops.spec import Case, CaseKind, OpSpec, canonical_dtype
from storage import Database, UserCase

Entry = dict[str, Any]
#: The ways an entry gives its lengths; an entry has exactly one of them.
LENGTH_KEYS = ("lengths", "offsets", "histogram")
#: The order of an entry's keys in a file (unknown keys are refused, so a typo is not ignored).
ENTRY_KEYS = ("name", "op", "shape", "dtype", "source", "calls", "kernels", *LENGTH_KEYS)
HEADER = (
    "# User cases of autotune: `autotune cases --op OP` lists them, `autotune run --cases-file`\n"
    "# tunes them. Written by autotune; a name ends in a hash of the lengths it names.\n"
)


def kind_for(interpreter: bool) -> CaseKind:
    """User cases run as the soc's built-in cases do: interpreter-sized or performance cases."""
    return "accuracy" if interpreter else "performance"


# -- lengths ----------------------------------------------------------------------------------
def edge(i: int) -> int:
    """The i-th edge of the histogram bins: 0, 1, 2, 3, 4, 6, 8, 12, 16, 24, ... (half octaves)."""
    if i < 2:
        return i
    return 1 << (i // 2) if i % 2 == 0 else 3 << ((i - 3) // 2)


def bin_edges(longest: int) -> list[int]:
    """The edges from 0 up past `longest`: bin i holds the lengths in [edge(i), edge(i + 1))."""
    edges = [0]
    while edges[-1] <= longest:
        edges.append(edge(len(edges)))
    return edges


def histogram(counts: dict[int, int]) -> Entry:
    """{edges, counts} of bin index -> count, from the first bin used to the last."""
    used = sorted(i for i, n in counts.items() if n)
    first, last = used[0], used[-1]
    return {
        "edges": [edge(i) for i in range(first, last + 2)],
        "counts": [counts.get(i, 0) for i in range(first, last + 1)],
    }


def lengths_from_histogram(hist: Entry, batch: int) -> tuple[int, ...]:
    """B lengths: the histogram's quantiles (linear within a bin) at `golden_points(B)`."""
    edges, counts = hist["edges"], hist["counts"]
    total = sum(counts)
    cumulative = list(itertools.accumulate(counts))
    lengths = []
    for u in golden_points(batch):
        target = u * total
        i = bisect.bisect_right(cumulative, target)  # its count is > 0: cumulative grows there
        share = (target - (cumulative[i - 1] if i else 0)) / counts[i]
        lengths.append(int(edges[i] + share * (edges[i + 1] - edges[i])))
    return tuple(lengths)


def check_offsets(offsets: list[int]) -> None:
    """ValueError (the launchers' own words) unless offsets start at 0 and never decrease."""
    if offsets[0] != 0:
        raise ValueError(f"offsets must start at 0, not {offsets[0]}")
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            raise ValueError(
                f"offsets must be non-decreasing: offsets[{i}]={offsets[i]} < offsets[{i - 1}]={offsets[i - 1]}"
            )


def _integer(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{what} must be an integer, not {value!r}")
    return value


def _integers(values: Any, what: str) -> list[int]:
    if not isinstance(values, list) or not values:
        raise ValueError(f"{what} must be a non-empty list of integers")
    return [_integer(v, what) for v in values]


def _histogram_lengths(hist: Any, batch: int) -> tuple[int, ...]:
    if not isinstance(hist, dict) or set(hist) != {"edges", "counts"}:
        raise ValueError("histogram must be a mapping of `edges` and `counts`")
    edges, counts = _integers(hist["edges"], "edges"), _integers(hist["counts"], "counts")
    if len(edges) != len(counts) + 1 or edges[0] < 0 or edges != sorted(set(edges)):
        raise ValueError("histogram edges must be increasing, from >= 0, one more than counts")
    if min(counts) < 0 or sum(counts) == 0:
        raise ValueError("histogram counts must be >= 0 and not all 0")
    return lengths_from_histogram({"edges": edges, "counts": counts}, batch)


# -- entries and cases ------------------------------------------------------------------------
def _digest(case: Case) -> str:
    data = [list(case.lengths), None if case.offsets is None else list(case.offsets)]
    return hashlib.sha256(json.dumps(data).encode()).hexdigest()[:8]


def case_of(spec: OpSpec, entry: Entry, kind: CaseKind, *, strict: bool = True) -> Case:
    """The entry's case, named; UserError in one line for an entry that is no case of `spec`.

    `strict`: offsets must start at 0 and never decrease; `autotune verify` passes invalid ones
    through, for the launchers' checked mode to name.
    """
    given_shape = entry.get("shape")
    label = entry.get("name") or (
        ",".join(f"{k}={v}" for k, v in given_shape.items())
        if isinstance(given_shape, dict)
        else given_shape
    )
    try:
        unknown = [k for k in entry if k not in ENTRY_KEYS]
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; an entry has {', '.join(ENTRY_KEYS)}")
        if entry.get("op", spec.name) != spec.name:
            raise ValueError(f"it is a case of {entry['op']}")
        if not isinstance(entry.get("shape"), dict):
            raise ValueError("`shape` must be a mapping such as {B: 4, max_seq_len: 16, D: 32}")
        shape = {str(k): _integer(v, f"shape {k}") for k, v in entry["shape"].items()}
        dtype = canonical_dtype(str(entry.get("dtype", "float32")))
        given = [k for k in LENGTH_KEYS if k in entry]
        if not spec.jagged:
            if given:
                raise ValueError(f"its rows are dense: no {given[0]}")
            case = spec.case_from_shape(shape, dtype, None)
        elif len(given) != 1:
            raise ValueError(f"it needs exactly one of {', '.join(LENGTH_KEYS)}")
        elif given == ["offsets"]:
            offsets = _integers(entry["offsets"], "offsets")
            if strict:
                check_offsets(offsets)
            case = spec.case_from_shape(shape, dtype, offsets)
        else:
            standard = spec.case_from_shape(shape, dtype, None)  # checks the shape's keys
            batch = standard.shape["B"]
            if given == ["lengths"]:
                lengths = tuple(_integers(entry["lengths"], "lengths"))
            else:
                lengths = _histogram_lengths(entry["histogram"], batch)
            if len(lengths) != batch:
                raise ValueError(f"{len(lengths)} lengths given; B={batch} needs {batch}")
            if min(lengths) < 0:
                raise ValueError(f"lengths must be >= 0, not {min(lengths)}")
            case = spec.make_case(standard.shape, dtype, lengths, kind)
    except (ValueError, TypeError) as exc:
        raise UserError(f"user case {label} of {spec.name}: {exc}") from None
    name = f"{case.name}_u{_digest(case) if spec.jagged else ''}"
    if entry.get("name") not in (None, name):
        raise UserError(
            f"user case {entry['name']} of {spec.name}: its lengths are those of {name} "
            "(edited by hand? delete its `name` line)"
        )
    return dataclasses.replace(case, name=name, kind=kind)


class CaseWarning(UserWarning):
    """Something about a user case that is allowed but worth one line (the CLI prints it so)."""


def past_max_seq_len(case: Case) -> str | None:
    """Why a case's lengths say more than it times, or None: lengths beyond its max_seq_len,
    whose rows past max_seq_len the jagged ops bounded by it never touch."""
    bound = case.shape.get("max_seq_len")
    longer = [n for n in case.lengths if bound is not None and n > bound]
    if not longer or min(case.lengths) < 0:  # offsets that decrease: the port refuses them
        return None
    return (
        f"user case {case.name} of {case.op}: {len(longer)} of {len(case.lengths)} lengths are "
        f"over max_seq_len={bound} (the longest {max(longer)}); the jagged ops bound each "
        f"sequence by max_seq_len, so its rows past that are not computed as the lengths say; "
        f"give max_seq_len={max(longer)} to cover them"
    )


def entry_of(case: Case, entry: Entry) -> Entry:
    """The entry with its case's name, its keys in the file's order."""
    named = {**entry, "name": case.name, "op": case.op}
    return {k: named[k] for k in ENTRY_KEYS if k in named}


def lengths_entry(spec: OpSpec, shape: dict[str, int], dtype: str, offsets: list[int]) -> Entry:
    """An entry for user-given offsets: the lengths where the offsets are valid running sums of
    them (the same case however it was given), else the offsets verbatim (a jagged2 op's sums of
    L_b^2, or offsets for the launchers' checked mode to refuse)."""
    lengths = spec.case_from_shape(shape, dtype, offsets).lengths
    if min(lengths, default=0) >= 0 and [0, *itertools.accumulate(lengths)] == offsets:
        return {"shape": shape, "dtype": dtype, "lengths": list(lengths)}
    return {"shape": shape, "dtype": dtype, "offsets": offsets}


# -- the cases file and the database ----------------------------------------------------------
#: Lengths lists longer than this are kept beside the cases file, one length a line in
#: `<stem>.lengths/<hash>.txt`, so the file stays small and fast to read.
INLINE_LENGTHS = 64
#: A stored lengths reference: the file's name is the start of its text's sha256.
REFERENCE = re.compile(r"[\w.-]+\.lengths/(?P<hash>[0-9a-f]{16})\.txt")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _compact(path: Path, entries: list[Entry]) -> dict[Path, str]:
    """The cases file and the lengths files its long lists move to (only those not there yet)."""
    files: dict[Path, str] = {}
    written = []
    for entry in entries:
        lengths = entry.get("lengths")
        if isinstance(lengths, list) and len(lengths) > INLINE_LENGTHS:
            text = "".join(f"{n}\n" for n in lengths)
            reference = f"{path.stem}.lengths/{_sha(text)}.txt"
            if not (path.parent / reference).exists():
                files[path.parent / reference] = text
            entry = {**entry, "lengths": reference}
        written.append(entry)
    return {path: render(written), **files}


def _resolve(path: Path, entry: Entry) -> Entry:
    """An entry whose lengths are a reference, with the lengths read (and their hash checked)."""
    reference = entry.get("lengths")
    if not isinstance(reference, str):
        return entry
    found = REFERENCE.fullmatch(reference)
    if found is None:
        raise UserError(
            f"{path}: lengths {reference!r} is neither a list nor <op>.lengths/<hash>.txt"
        )
    try:
        text = (path.parent / reference).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(
            f"{path}: cannot read its lengths {reference}: {getattr(exc, 'strerror', exc)}"
        ) from None
    if _sha(text) != found["hash"]:
        raise UserError(f"{path}: {reference} does not match its hash (edited by hand?)")
    try:
        return {**entry, "lengths": [int(line) for line in text.split()]}
    except ValueError:
        raise UserError(f"{path}: {reference} holds a line that is not an integer") from None


def read_file(path: Path) -> list[Entry]:
    """The entries of a cases file, lengths kept beside it read; UserError in one line if it
    cannot be read or parsed."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"cannot read cases file {path}: {getattr(exc, 'strerror', exc)}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise UserError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return []
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or not all(isinstance(e, dict) for e in cases):
        raise UserError(f"{path}: expected a mapping whose `cases` is a list of mappings")
    return [_resolve(path, entry) for entry in cases]


def render(entries: list[Entry]) -> str:
    body = yaml.safe_dump({"cases": entries}, sort_keys=False, default_flow_style=None, width=100)
    return HEADER + body


def write_file(path: Path, entries: list[Entry]) -> None:
    write_files(_compact(path, entries))


def _file_entries(spec: OpSpec) -> list[Entry]:
    path = cases_file(spec.name)
    return read_file(path) if path.exists() else []


def _database_entries(db: Database, op: str) -> list[Entry]:
    with db.sessions() as session:
        rows = session.scalars(select(UserCase).where(UserCase.op == op).order_by(UserCase.id))
        return [dict(row.entry) for row in rows]


def user_cases(
    spec: OpSpec, kind: CaseKind, db: Database | None = None
) -> list[tuple[Case, Entry]]:
    """The op's user cases: those of its cases file, then those only the database has."""
    found: dict[str, tuple[Case, Entry]] = {}
    entries = _file_entries(spec) + (_database_entries(db, spec.name) if db else [])
    for entry in entries:
        case = case_of(spec, entry, kind)
        found.setdefault(case.name, (case, entry))
    return list(found.values())


def register(spec: OpSpec, entries: list[Entry], db: Database | None) -> list[str]:
    """Add named entries (`entry_of`) to the op's cases file and the database; the names added."""
    path = cases_file(spec.name)
    check_writable([path])  # before its folder or lock file is made
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.parent / ".cases.lock")):
        known = _file_entries(spec)
        names = {e.get("name") for e in known}
        added = [e for e in entries if e["name"] not in names]
        if added:
            write_file(path, known + added)
    if db is not None:
        with db.sessions() as session:
            stored = set(
                session.scalars(select(UserCase.name).where(UserCase.op == spec.name)).all()
            )
            for entry in entries:
                if entry["name"] not in stored:
                    session.add(UserCase(op=spec.name, name=entry["name"], entry=entry))
                    stored.add(entry["name"])
            session.commit()
    return [e["name"] for e in added]


def find(spec: OpSpec, name: str, kind: CaseKind, db: Database | None = None) -> Case:
    """A built-in case of either kind, else a user case; ValueError listing the valid names."""
    try:
        return spec.case(name)
    except ValueError as builtin:
        for case, _ in user_cases(spec, kind, db):
            if case.name == name:
                return case
        raise builtin from None
