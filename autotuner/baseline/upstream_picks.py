"""Upstream's own `triton.autotune` picks: recorded when a baseline times upstream, replayed by
`autotune check`, so that a reference holds still between processes.

Triton's Autotuner (`triton/runtime/autotuner.py`, alike in Triton 3.6 and 3.9) times every config
of its list the first time a process meets a key and keeps the fastest in its `cache`; every call
sets `best_config` to the config it launched. With one config in its list, `run` launches
`self.configs[0]` and times nothing (`if len(self.configs) > 1: ... else: config =
self.configs[0]`): holding `configs` to the recorded config launches upstream at it, its autotune
bypassed, with the config object upstream defined (its pre_hook included).

The Autotuners are found by walking the upstream module's attributes, no op named: an attribute
that is an Autotuner, or wraps one (`triton.heuristics` over `triton.autotune` keeps it in `fn`).
A part that launches one autotuned kernel under several keys records the last pick.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from triton.runtime.autotuner import Autotuner

from core.errors import UserError
from ops.spec import OpSpec

#: kernel attribute of the upstream module -> its config as `triton.Config.all_kwargs()` gives it
#: (the meta-parameters with num_warps, num_stages, ...), JSON as stored.
Picks = dict[str, dict[str, Any]]


class PickGone(UserError):
    """A recorded pick that upstream cannot launch at any more (its config list changed)."""


def autotuners(modules: Iterable[types.ModuleType]) -> dict[str, Autotuner]:
    """The modules' autotuned kernels by attribute name."""
    found = {}
    for name, value in (item for module in modules for item in vars(module).items()):
        wrapped, depth = value, 0
        while wrapped is not None and depth < 4 and not isinstance(wrapped, Autotuner):
            wrapped, depth = getattr(wrapped, "fn", None), depth + 1
        if isinstance(wrapped, Autotuner):
            found[name] = wrapped
    return found


def as_dict(config: Any) -> dict[str, Any]:
    """A `triton.Config` as stored: its `all_kwargs()` as JSON gives it back (a tuple a list, a
    value JSON cannot hold its text), so that a recorded pick compares equal to its config."""
    return json.loads(json.dumps(config.all_kwargs(), default=str))


def record(
    modules: Iterable[types.ModuleType], call: Callable[[], object], fresh: bool = False
) -> Picks:
    """Run `call` once (upstream tunes itself here the first time it meets a key) and return the
    config each autotuned kernel it launched ran at. `fresh`: as in a process that ran nothing
    else (each Autotuner's cache empty for the call, given back after), for a second source of
    the same kernels whose autotune key does not see what it changes (upstream's `enable_tma`
    is no key of its attention's backward)."""
    tuners = autotuners(modules)
    caches = {}
    for name, tuner in tuners.items():
        vars(tuner).pop("best_config", None)
        if fresh:
            caches[name], tuner.cache = tuner.cache, {}
    try:
        call()
    finally:
        for name, cache in caches.items():
            tuners[name].cache = cache
    return {
        name: as_dict(tuner.best_config)
        for name, tuner in sorted(tuners.items())
        if getattr(tuner, "best_config", None) is not None
    }


def _held(modules: Iterable[types.ModuleType], picks: Picks) -> list[tuple[Autotuner, Any]]:
    """(Autotuner, its config object of the recorded pick) per pick; PickGone where one has no
    such config any more."""
    tuners = autotuners(modules)
    held = []
    for name, want in picks.items():
        tuner = tuners.get(name)
        if tuner is None:
            raise PickGone(f"upstream has no autotuned kernel {name} any more")
        config = next((c for c in tuner.configs if as_dict(c) == want), None)
        if config is None:
            raise PickGone(f"upstream's {name} lists no config {describe({name: want})} any more")
        held.append((tuner, config))
    return held


@contextmanager
def pinned(modules: Iterable[types.ModuleType], picks: Picks) -> Iterator[None]:
    """Upstream's autotuned kernels held to the recorded picks (each Autotuner's `configs` the
    one recorded config of its own list) while the block runs; PickGone where one has no such
    config any more."""
    given_back = []
    try:
        for tuner, config in _held(modules, picks):
            given_back.append((tuner, tuner.configs))
            tuner.configs = [config]
        yield
    finally:
        for tuner, configs in given_back:
            tuner.configs = configs


def pin(
    modules: Iterable[types.ModuleType], picks: Picks, call: Callable[[], object]
) -> Callable[[], object]:
    """`call`, held to `picks` each time it runs (as `pinned`, the configs found once here): for
    sources of the same kernels timed in one round at different picks (upstream, upstream_tma)."""
    held = _held(modules, picks)

    def pinned_call() -> object:
        given_back = [(tuner, tuner.configs) for tuner, _ in held]
        for tuner, config in held:
            tuner.configs = [config]
        try:
            return call()
        finally:
            for tuner, configs in given_back:
                tuner.configs = configs

    return pinned_call


def describe(picks: Picks) -> str:
    """One short line: `kernel: BLOCK_M=64 BLOCK_N=32 w4 s3`, kernels joined by `; `."""
    shown = []
    for name, config in picks.items():
        launch = {"num_warps": "w", "num_stages": "s", "num_ctas": "ctas", "maxnreg": "maxnreg"}
        meta = [f"{k}={v}" for k, v in config.items() if k not in launch]
        options = [
            f"{short}{config[k]}"
            for k, short in launch.items()
            if k in config and not (k == "num_ctas" and config[k] == 1)
        ]
        shown.append(f"{name.lstrip('_')}: {' '.join(meta + options)}")
    return "; ".join(shown)


def modules_of(spec: OpSpec) -> list[types.ModuleType]:
    """The upstream modules an op's upstream parts launch kernels of: its pinned file, and the
    one holding the kernels its specs name where that is another."""
    first, kernels = spec.upstream.load(), spec.upstream_module()
    return [first] if kernels is first else [first, kernels]
