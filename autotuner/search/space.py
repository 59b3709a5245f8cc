"""A kernel's search space on one backend: ordinal axes, Optuna distributions, feasibility."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from optuna.distributions import BaseDistribution, CategoricalDistribution, IntDistribution

from core.limits import DeviceLimits
from ops.npu_tunables import MIXED_CV_OPTIONS, SIMT_ONLY, SIMT_WARPS
from ops.spec import Case, Config, KernelSpec
from ops.tunable import Tunable


def config_key(config: Config) -> str:
    """Canonical text of a config: equal configs, equal keys."""
    return json.dumps(dict(sorted(config.items())), separators=(",", ":"))


def _are_ints(values: tuple[int | str, ...]) -> bool:
    """Integers proper: booleans (on/off options such as multibuffer) and strings are categories."""
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def _is_pow2_run(values: tuple[int, ...]) -> bool:
    if not _are_ints(values) or min(values) <= 0:
        return False
    exps = [math.log2(v) for v in values]
    return all(e.is_integer() for e in exps) and exps == list(
        range(int(exps[0]), int(exps[0]) + len(exps))
    )


def _is_int_run(values: tuple[int, ...]) -> bool:
    return _are_ints(values) and list(values) == list(range(values[0], values[0] + len(values)))


def _is_ranked(values: tuple[int | str, ...]) -> bool:
    """Integers in an order of their own, neither powers of two nor a run (a program count whose
    last value, 0, is the classic grid): ordinal by position."""
    return _are_ints(values) and not _is_pow2_run(values) and not _is_int_run(values)


def _unread(tunable: Tunable, config: Config) -> bool:
    """`tunable` is off its default in a config where the compiler does not read it."""
    other, value = tunable.read_only_when or ("", None)
    return other in config and config[other] != value and config[tunable.name] != tunable.default


def param_name(tunable: Tunable) -> str:
    if _is_pow2_run(tunable.values):
        return f"log2_{tunable.name}"
    return f"rank_{tunable.name}" if _is_ranked(tunable.values) else tunable.name


def _to_param(tunable: Tunable, value: int | str) -> int | str:
    if _is_pow2_run(tunable.values):
        return int(math.log2(value))  # type: ignore[arg-type]
    return tunable.values.index(value) if _is_ranked(tunable.values) else value


def _from_param(tunable: Tunable, param: int | str) -> int | str:
    if _is_pow2_run(tunable.values):
        return 2**param  # type: ignore[operator]
    return tunable.values[param] if _is_ranked(tunable.values) else param  # type: ignore[index]


@dataclass(frozen=True)
class SearchSpace:
    kernel: KernelSpec
    #: The tunables this backend understands; launch options it does not know are left out.
    tunables: tuple[Tunable, ...]

    @property
    def size(self) -> int:
        return math.prod(len(t.values) for t in self.tunables)

    def restrict(self, config: Config) -> Config:
        """The part of a config this space searches (e.g. the default without num_stages on Ascend)."""
        names = {t.name for t in self.tunables}
        return {k: v for k, v in config.items() if k in names}

    def complete(self, config: Config) -> Config:
        """`config` restricted to this space, plus the launch options it leaves out at the value a
        launch without them gets (e.g. upstream's default, which cannot name multibuffer); a
        launch option outside this space's values takes that value too (upstream's 4 warps in
        Ascend's SIMT space)."""
        missing = [
            t
            for t in self.tunables
            if t.name not in config or (t.launch_option and config[t.name] not in t.values)
        ]
        unset = [t.name for t in missing if t.default is None]
        if unset:
            raise ValueError(f"config {config} names no {', '.join(unset)}, which have no default")
        return {**self.restrict(config), **{t.name: t.default for t in missing}}

    def distributions(self) -> dict[str, BaseDistribution]:
        """Powers of two as their exponent, runs of integers as integers, other integers as their
        position: all ordinal for TPE; anything else (multibuffer's off and on, compiler option
        names) as categories."""
        out: dict[str, BaseDistribution] = {}
        for t in self.tunables:
            if _is_pow2_run(t.values):
                lo = int(math.log2(t.values[0]))
                out[param_name(t)] = IntDistribution(lo, lo + len(t.values) - 1)
            elif _is_int_run(t.values):
                out[t.name] = IntDistribution(t.values[0], t.values[-1])
            elif _is_ranked(t.values):
                out[param_name(t)] = IntDistribution(0, len(t.values) - 1)
            else:
                out[t.name] = CategoricalDistribution(t.values)
        return out

    def to_params(self, config: Config) -> dict[str, int]:
        return {param_name(t): _to_param(t, config[t.name]) for t in self.tunables}

    def from_params(self, params: dict[str, int]) -> Config:
        return {t.name: _from_param(t, params[param_name(t)]) for t in self.tunables}

    def configs(self) -> Iterable[Config]:
        """Every config of the product, less those that only differ from another in a tunable
        the compiler does not read there (`Tunable.read_only_when`): they would compile alike."""
        names = [t.name for t in self.tunables]
        inert = [t for t in self.tunables if t.read_only_when]
        for values in itertools.product(*(t.values for t in self.tunables)):
            config = dict(zip(names, values, strict=True))
            if not any(_unread(t, config) for t in inert):
                yield config

    def around(self, configs: list[Config]) -> SearchSpace:
        """The smallest box of contiguous values per axis that holds `configs`: bounds such as
        "BLOCK_T no larger than T" become the sampler's domain instead of rejected proposals."""
        tunables = []
        for t in self.tunables:
            used = [t.values.index(c[t.name]) for c in configs]
            tunables.append(dataclasses.replace(t, values=t.values[min(used) : max(used) + 1]))
        return SearchSpace(self.kernel, tuple(tunables))

    def contains(self, config: Config) -> bool:
        return all(config.get(t.name) in t.values for t in self.tunables)

    def feasible(self, case: Case, limits: DeviceLimits) -> list[Config]:
        return self.partition(case, limits)[0]

    def partition(
        self, case: Case, limits: DeviceLimits
    ) -> tuple[list[Config], list[tuple[Config, str]]]:
        """(the configs the static constraints keep, [(config, why not)] for the others)."""
        feasible, rejected = [], []
        for config in self.configs():
            reason = self.kernel.violation(config, case, limits)
            if reason is None:
                feasible.append(config)
            else:
                rejected.append((config, reason))
        return feasible, rejected

    def position(self, config: Config) -> tuple[int, ...]:
        return tuple(t.values.index(config[t.name]) for t in self.tunables)

    @property
    def most_neighbors(self) -> int:
        """The most configs `neighbors` gives: two per axis of three values or more, one per
        axis of two."""
        return sum(min(2, len(t.values) - 1) for t in self.tunables)

    def neighbors(self, config: Config) -> list[Config]:
        """Configs one ordinal step away along one axis."""
        out = []
        for t in self.tunables:
            i = t.values.index(config[t.name])
            for j in (i - 1, i + 1):
                if 0 <= j < len(t.values):
                    out.append({**config, t.name: t.values[j]})
        return out

    def pattern_moves(
        self, config: Config, measured: dict[str, tuple[Config, float]]
    ) -> list[Config]:
        """`config` moved by the steps of two of its measured neighbours at once (steps along
        different axes, targets inside the space), the pair of fastest steps first.

        Every pair of measured neighbours is combined, not only the fastest few: tiles and stages
        often trade against each other, so the better config can sit two steps away while each
        step alone is slower. Pairs are ranked by t(a) + t(b), the additive prediction up to the
        constant t(config) (`measured`: config key -> (config, ms)).
        """
        home = self.position(config)
        steps = sorted(
            (value, tuple(a - b for a, b in zip(self.position(c), home, strict=True)))
            for c, value in (
                measured.get(config_key(n), (None, None)) for n in self.neighbors(config)
            )
            if c is not None
        )
        pairs = []
        for i, (first_time, first) in enumerate(steps):
            for second_time, second in steps[i + 1 :]:
                if any(a and b for a, b in zip(first, second, strict=True)):
                    continue  # the same axis twice is not a diagonal
                target = [h + a + b for h, a, b in zip(home, first, second, strict=True)]
                if all(0 <= v < len(t.values) for v, t in zip(target, self.tunables, strict=True)):
                    values = {
                        t.name: t.values[v] for v, t in zip(target, self.tunables, strict=True)
                    }
                    pairs.append((first_time + second_time, values))
        return [target for _, target in sorted(pairs, key=lambda pair: pair[0])]

    def nearest(self, config: Config, candidates: Iterable[Config]) -> Config | None:
        """The candidate closest to `config` in ordinal steps (ties: first in order)."""
        here = self.position(config)
        best, best_distance = None, math.inf
        for candidate in candidates:
            distance = sum(abs(a - b) for a, b in zip(self.position(candidate), here, strict=True))
            if distance < best_distance:
                best, best_distance = candidate, distance
        return best


def compiler_options(kernel: KernelSpec) -> tuple[Tunable, ...]:
    """The Ascend compiler options that apply to a kernel: those of mixed cube/vector code for a
    kernel with `tl.dot` (`ops.npu_tunables`); a vector-only kernel has multibuffer alone."""
    return MIXED_CV_OPTIONS if kernel.dots is not None else ()


def space_for(
    kernel: KernelSpec,
    launch_options: frozenset[str],
    option_defaults: Mapping[str, int | str] | None = None,
) -> SearchSpace:
    """The kernel's tunables a backend understands, launch options at the backend's defaults
    (`option_defaults`, e.g. multibuffer off on the 950). A backend that names `compile_mode`
    compiles Ascend SIMT code: its warp counts are triton-ascend's SIMT ones, not the GPU's."""
    simt = SIMT_ONLY.name in launch_options
    tunables = []
    for t in (*kernel.tunables, *compiler_options(kernel)):
        if t.launch_option and t.name not in launch_options:
            continue
        if simt and t.name == SIMT_WARPS.name:
            t = SIMT_WARPS
        if option_defaults and t.name in option_defaults:
            t = dataclasses.replace(t, default=option_defaults[t.name])
        tunables.append(t)
    if simt:
        tunables.append(SIMT_ONLY)
    return SearchSpace(kernel, tuple(tunables))
