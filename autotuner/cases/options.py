"""The user-case options of the tuning commands, in one place.

`@case_options` gives a typer command `--shape B=..,max_seq_len=..,D=..` with one of `--offsets`,
`--lengths-file` or `--lengths-dist`, `--dtype` (unless the command has its own) and
`--cases-file`; the command receives them as one `CaseRequest`, which turns them into named cases
(`autotuner.cases.store`) and registers those in the repository's cases file and the database.
"""

from __future__ import annotations

import functools
import inspect
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from core.errors import UserError

if TYPE_CHECKING:
    from ops.spec import Case, OpSpec
    from storage import Database

    from .bound import Room
    from .store import Entry

#: Distribution name -> its parameters (all required) -> numpy draws of B lengths; every one
#: also takes `seed` (default 0). lognormal's `mean` is the mean of the lengths themselves.
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "lognormal": ("mean", "sigma"),
    "normal": ("mean", "std"),
    "uniform": ("low", "high"),
    "exponential": ("mean",),
}


def parse_shape(text: str) -> dict[str, int]:
    """`B=3,max_seq_len=16,D=32` -> dict; UserError naming the bad part."""
    shape: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UserError(
                f"malformed --shape part {part!r}: expected KEY=INT, e.g. B=4,max_seq_len=16,D=32"
            )
        try:
            shape[key.strip()] = int(value)
        except ValueError:
            raise UserError(
                f"malformed --shape value {value!r} for {key.strip()}: not an integer"
            ) from None
    return shape


def parse_ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"malformed {what} {text!r}: expected comma-separated integers") from None


def read_lengths(path: Path) -> list[int]:
    """One length a line (blank lines skipped), or a 1-D integer `.npy` array."""
    import numpy as np

    try:
        if path.suffix == ".npy":
            array = np.load(path, allow_pickle=False)
            if array.ndim != 1 or array.dtype.kind not in "iu":
                raise UserError(
                    f"lengths file {path}: expected a 1-D integer array, got {array.dtype} of shape {array.shape}"
                )
            return [int(x) for x in array]
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        raise UserError(
            f"cannot read lengths file {path}: {getattr(exc, 'strerror', None) or exc}"
        ) from None
    lengths = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            try:
                lengths.append(int(line))
            except ValueError:
                raise UserError(
                    f"lengths file {path} line {number}: {line.strip()!r} is not an integer"
                ) from None
    return lengths


def parse_distribution(text: str) -> tuple[str, dict[str, float], int]:
    """`lognormal:mean=120,sigma=0.8[,seed=3]` -> (name, parameters, seed)."""
    name, _, rest = text.partition(":")
    if name not in DISTRIBUTIONS:
        raise UserError(
            f"unknown --lengths-dist {name!r}; use one of "
            + ", ".join(f"{d}:{'=..,'.join(p)}=.." for d, p in DISTRIBUTIONS.items())
        )
    values: dict[str, float] = {}
    for part in filter(None, rest.split(",")):
        key, sep, value = part.partition("=")
        try:
            values[key.strip()] = float(value) if sep else math.nan
        except ValueError:
            values[key.strip()] = math.nan
        if not math.isfinite(values[key.strip()]):
            raise UserError(f"malformed --lengths-dist part {part!r}: expected KEY=NUMBER")
    seed = values.pop("seed", 0.0)
    wanted = set(DISTRIBUTIONS[name])
    if set(values) != wanted or seed != int(seed):
        raise UserError(
            f"--lengths-dist {name} takes {', '.join(DISTRIBUTIONS[name])} and an integer seed; got {text!r}"
        )
    return name, values, int(seed)


def draw_lengths(text: str, batch: int) -> tuple[list[int], str]:
    """B lengths drawn from a `--lengths-dist`, rounded and clipped at 0; and its spelling with
    the seed, for the case's `source`."""
    import numpy as np

    name, p, seed = parse_distribution(text)
    rng = np.random.default_rng(seed)
    if name == "lognormal":
        if p["mean"] <= 0 or p["sigma"] < 0:
            raise UserError("--lengths-dist lognormal needs mean > 0 and sigma >= 0")
        draws = rng.lognormal(math.log(p["mean"]) - p["sigma"] ** 2 / 2, p["sigma"], batch)
    elif name == "normal":
        draws = rng.normal(p["mean"], abs(p["std"]), batch)
    elif name == "uniform":
        draws = rng.uniform(p["low"], p["high"], batch)
    else:
        draws = rng.exponential(abs(p["mean"]), batch)
    spelled = f"{name}:" + ",".join(f"{k}={v:g}" for k, v in p.items()) + f",seed={seed}"
    return [max(0, round(float(x))) for x in draws], spelled


@dataclass(frozen=True)
class CaseRequest:
    """The user-case options of one command line; empty when none was given."""

    shape: str | None = None
    offsets: str | None = None
    lengths_file: Path | None = None
    lengths_dist: str | None = None
    cases_file: Path | None = None
    dtype: str | None = None

    @property
    def given(self) -> bool:
        return bool(self.shape or self.cases_file)

    @property
    def length_flags(self) -> list[str]:
        """The options given that say a case's lengths, as flags (`--offsets`, ...)."""
        given = [o for o in ("offsets", "lengths_file", "lengths_dist") if getattr(self, o)]
        return ["--" + o.replace("_", "-") for o in given]

    def check(self) -> None:
        """The options fit together (before any op is looked at)."""
        flags = self.length_flags
        if len(flags) > 1:
            raise UserError(f"give the lengths one way, not {', '.join(flags)}")
        if flags and not self.shape:
            raise UserError(f"{flags[0]} goes with --shape")
        if self.shape and self.cases_file:
            raise UserError("--shape and --cases-file each name cases; use one of them")

    def entries(
        self, spec: OpSpec, *, strict: bool = True, room: Room | None = None
    ) -> list[Entry]:
        """The cases asked for `spec`, as named entries; UserError (nothing written) if bad, or
        if one does not fit `room` (default: this host's), judged before its lengths are made."""
        from ops.jagged import skewed_lengths
        from ops.spec import canonical_dtype

        from . import bound
        from .store import (
            CaseWarning,
            case_of,
            entry_of,
            lengths_entry,
            past_max_seq_len,
            read_file,
        )

        self.check()
        room = room or bound.Room.here()
        if self.cases_file:
            found = [e for e in read_file(self.cases_file) if e.get("op", spec.name) == spec.name]
            if not found:
                raise UserError(f"{self.cases_file} has no case of {spec.name}")
            found.sort(key=lambda e: -e["calls"] if isinstance(e.get("calls"), int) else 0)
            for entry in found:
                bound.check_entry(spec, entry, room)
            cases = [(case_of(spec, e, "performance"), e) for e in found]
            for case, _ in cases:
                bound.check_case(spec, case, room)
            for case, _ in cases:
                if note := past_max_seq_len(case):
                    warnings.warn(note, CaseWarning, stacklevel=2)
            return [entry_of(case, e) for case, e in cases]
        if not self.shape:
            return []
        shape = parse_shape(self.shape)
        dtype = canonical_dtype(self.dtype or "float32")
        bound.check(spec, self.shape, bound.estimate(spec, shape, dtype), room)
        shape = {k: shape[k] for k in spec.shape_keys}
        entry: Entry = {"shape": shape, "dtype": dtype}
        if not spec.jagged:
            if self.length_flags:
                raise UserError(
                    f"{spec.name} takes dense rows: {self.length_flags[0]} is for jagged ops"
                )
            entry["source"] = "--shape"
        elif self.offsets:
            entry = lengths_entry(spec, shape, dtype, parse_ints(self.offsets, "--offsets"))
            entry["source"] = "--offsets"
        elif self.lengths_file:
            entry["source"] = f"--lengths-file {self.lengths_file.name}"
            entry["lengths"] = read_lengths(self.lengths_file)
        elif self.lengths_dist:
            entry["lengths"], entry["source"] = draw_lengths(self.lengths_dist, shape["B"])
        else:
            entry["source"] = "the built-in cases' skew"
            entry["lengths"] = list(skewed_lengths(shape["B"], shape["max_seq_len"]))
        case = case_of(spec, entry, "performance", strict=strict)
        bound.check_case(spec, case, room)  # its own lengths, drawn or read
        if note := past_max_seq_len(case):
            warnings.warn(note, CaseWarning, stacklevel=2)
        return [entry_of(case, entry)]

    def cases(
        self, spec: OpSpec, interpreter: bool, *, strict: bool = True, room: Room | None = None
    ) -> list[Case]:
        """The cases asked for `spec`, as the soc runs them (interpreter-sized or performance)."""
        from .store import case_of, kind_for

        kind = kind_for(interpreter)
        entries = self.entries(spec, strict=strict, room=room)
        return [case_of(spec, e, kind, strict=strict) for e in entries]

    def register(self, spec: OpSpec, db: Database | None, room: Room | None = None) -> list[str]:
        """Keep the cases asked for `spec` in its cases file and the database; the names added
        to the file."""
        from .store import register

        entries = self.entries(spec, room=room)
        return register(spec, entries, db) if entries else []


_HELP = {
    "shape": "A user case of one op, e.g. B=4,max_seq_len=16,D=32 (lengths: the built-in skew "
    "unless given).",
    "offsets": "Its jagged offsets as the port's launcher takes them, e.g. 0,5,5,21.",
    "lengths_file": "Its B lengths: one a line, or a 1-D integer .npy array.",
    "lengths_dist": "Its B lengths drawn from lognormal:mean=..,sigma=.. (mean of the lengths), "
    "normal:mean=..,std=.., uniform:low=..,high=.. or exponential:mean=.., each with seed=.. "
    "(default 0).",
    "cases_file": "User cases of a cases file (`autotune.capture`, cases/<op>.yaml), most "
    "frequent first.",
    "dtype": "Dtype of the --shape case (fp32, fp16, bf16; default fp32).",
}
_TYPES: dict[str, Any] = {"lengths_file": Path | None, "cases_file": Path | None}
NO_REQUEST = CaseRequest()


def case_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a typer command the user-case options; it receives them as `request: CaseRequest`.

    The command declares `request: CaseRequest = NO_REQUEST`; typer sees the options instead.
    A command with its own `dtype` option keeps it, and the request gets its value too.
    """
    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "request"]
    shared = {p.name for p in own}
    added = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=None,
            annotation=Annotated[_TYPES.get(f.name, str | None), typer.Option(help=_HELP[f.name])],
        )
        for f in fields(CaseRequest)
        if f.name not in shared
    ]
    names = [f.name for f in fields(CaseRequest)]

    @functools.wraps(command)
    def with_request(**kwargs: Any) -> Any:
        values = {n: kwargs[n] if n in shared else kwargs.pop(n) for n in names}
        return command(**kwargs, request=CaseRequest(**values))

    with_request.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
    with_request.__annotations__ = {
        k: v for k, v in command.__annotations__.items() if k != "request"
    }
    return with_request
