"""Warm starts of a study: the winners of its sibling studies, measured right after the default,
then upstream's own autotune list.

Siblings are the same op and kernel on other cases of this soc (and this case under an older
kernel source), nearest shapes first, then the same case on other socs (GPU winners seed an NPU
search, and back). Their winners come from our studies' verdicts and from the frozen configs.
Each is moved into this study's space (a value outside an axis to the nearest one, a tunable the
other backend lacks at this default's value); only configs feasible here are kept, and a few.

Where upstream runs its kernel under `triton.autotune`, upstream times every config of that list
on the GPU and keeps the best: a study that never measures them can lose to upstream by
construction. On a GPU, a study whose budget holds the list beside the default and the siblings'
winners measures all of it next; a smaller budget takes its first configs within the siblings' cap.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import or_, select

from core.errors import UserError
from ops.spec import Config, KernelSpec, OpSpec
from storage import Database, StudyRecord

from ..atk.store import FrozenStore
from .space import SearchSpace, config_key
from .verdict import Verdict

#: At most this many warm starts, and at most this share of the budget (at least one).
MAX_WARM_STARTS = 4
WARM_SHARE = 0.25


@dataclass(frozen=True)
class Sibling:
    """A winner of another study: where it won and with what."""

    case: str
    shape: dict[str, int]
    dtype: str
    soc: str
    config: Config


def distance(shape: dict[str, int], dtype: str, other: Sibling) -> float:
    """Sum of |log2| ratios over the shape's dimensions, plus one for another dtype."""
    steps = sum(
        abs(math.log2(max(1, shape[k]) / max(1, other.shape[k]))) for k in shape if k in other.shape
    )
    return steps + (dtype != other.dtype)


def project(space: SearchSpace, default: Config, config: Config) -> Config:
    """`config` in `space`: each value outside its axis moved to the nearest one (in log2 for
    powers of two), each tunable it lacks at the default's value."""
    out = {}
    for tunable in space.tunables:
        value = config.get(tunable.name, default[tunable.name])
        if value not in tunable.values:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                value = default[tunable.name]
            else:
                value = min(tunable.values, key=lambda v: abs(math.log2(max(v, 1) / value)))
        out[tunable.name] = value
    return out


def limit(budget: int) -> int:
    return max(1, min(MAX_WARM_STARTS, math.floor(WARM_SHARE * budget)))


def choose(
    space: SearchSpace,
    feasible: Iterable[Config],
    default: Config,
    budget: int,
    case: tuple[str, dict[str, int], str, str],
    siblings: Iterable[Sibling],
    upstream: Iterable[Config] = (),
) -> list[Config]:
    """The warm starts of a study of `case` (name, shape, dtype, soc), in order: this soc's
    siblings by distance, then other socs' same case, then `upstream`'s autotune list (whole
    where the budget holds it, see the module docstring); feasible here, not the default, each
    once."""
    name, shape, dtype, soc = case
    ranked = sorted(
        (s for s in siblings if s.soc == soc or s.case == name),
        key=lambda s: (distance(shape, dtype, s), s.soc != soc),
    )
    feasible_keys = {config_key(c) for c in feasible}

    def admitted(configs: Iterable[Config]) -> dict[str, Config]:
        out: dict[str, Config] = {}
        for config in (project(space, default, c) for c in configs):
            key = config_key(config)
            if key in feasible_keys and config != default and key not in out:
                out[key] = config
        return out

    chosen = dict(list(admitted(s.config for s in ranked).items())[: limit(budget)])
    listed = {k: c for k, c in admitted(upstream).items() if k not in chosen}
    room = budget - 1 - len(chosen)  # the default is the study's first trial
    take = len(listed) if len(listed) <= room else max(0, limit(budget) - len(chosen))
    return [*chosen.values(), *list(listed.values())[:take]]


def from_upstream(spec: OpSpec, kernel: KernelSpec) -> list[Config]:
    """The configs upstream's `triton.autotune` times for `kernel` (its Autotuner's `configs`:
    the meta-parameters with num_warps and num_stages), in upstream's order; none where upstream
    cannot be loaded here or does not autotune the kernel."""
    if not kernel.upstream_kernel or spec.upstream.missing():
        return []
    autotuned = getattr(spec.upstream_module(), kernel.upstream_kernel, None)
    return [
        {**c.kwargs, "num_warps": c.num_warps, "num_stages": c.num_stages}
        for c in getattr(autotuned, "configs", None) or ()
    ]


def from_studies(
    db: Database, op: str, kernel: str, soc: str, case: str, exclude: str
) -> list[Sibling]:
    """Verdict winners of the op's studies of `kernel` on `soc`, and of `case` on other socs."""
    query = select(StudyRecord).where(
        StudyRecord.op == op,
        StudyRecord.kernel == kernel,
        StudyRecord.name != exclude,
        StudyRecord.verdict.is_not(None),
        or_(StudyRecord.soc == soc, StudyRecord.case_name == case),
    )
    with db.sessions() as session:
        records = list(session.scalars(query))
    verdicts = [(r, Verdict.of(r.verdict)) for r in records]  # a JSON null is no verdict either
    return [
        Sibling(r.case_name, r.case["shape"], r.case["dtype"], r.soc, dict(v.winner))
        for r, v in verdicts
        if v is not None
    ]


def from_frozen(op: str, kernel: str, root: Path | None = None) -> list[Sibling]:
    """The frozen configs of `kernel` on every soc (`FrozenStore`), by soc, then case."""
    try:
        store = FrozenStore.read(op, root)
    except UserError:
        return []  # an unreadable performance json seeds nothing; `autotune lint` reports it
    return [
        Sibling(e.case, e.shape, e.dtype, e.soc, e.config)
        for e in sorted(store.entries, key=lambda e: (e.soc, e.case))
        if e.kernel == kernel
    ]
