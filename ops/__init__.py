"""Op specs, discovered: every module of this package that defines `SPEC` is an op.

`AUTOTUNE_OPS_MODULES` (comma-separated module names) adds ops that live outside the package.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
from functools import cache

from .spec import OpSpec


@cache
def all_ops() -> dict[str, OpSpec]:
    """Op name -> spec, for every module that defines SPEC, sorted by name."""
    names = [f"{__name__}.{info.name}" for info in pkgutil.iter_modules(__path__)]
    names += [m.strip() for m in os.environ.get("AUTOTUNE_OPS_MODULES", "").split(",") if m.strip()]
    found: dict[str, OpSpec] = {}
    for name in names:
        spec = getattr(importlib.import_module(name), "SPEC", None)
        if isinstance(spec, OpSpec):
            found[spec.name] = spec
    return dict(sorted(found.items()))


def get_op(name: str) -> OpSpec:
    ops = all_ops()
    if name not in ops:
        raise ValueError(f"unknown op {name!r}; known ops: {', '.join(ops)}")
    return ops[name]
