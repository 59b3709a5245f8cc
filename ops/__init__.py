"""Op specs, discovered: every module of this package that defines `SPEC` is an op."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

from .spec import OpSpec


@cache
def all_ops() -> dict[str, OpSpec]:
    """Op name -> spec, for every module here that defines SPEC, sorted by name."""
    found: dict[str, OpSpec] = {}
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        spec = getattr(module, "SPEC", None)
        if isinstance(spec, OpSpec):
            found[spec.name] = spec
    return dict(sorted(found.items()))


def get_op(name: str) -> OpSpec:
    ops = all_ops()
    if name not in ops:
        raise ValueError(f"unknown op {name!r}; known ops: {', '.join(ops)}")
    return ops[name]
