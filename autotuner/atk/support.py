"""The support file of an ATK folder side (`<op>_support.py`): what the folder needs besides torch
and triton, rendered so that a folder copied out of this repository still imports and runs.

Both sides get ATK's API classes (or stand-ins where ATK is not installed) and the constants the
cases use; the NPU side also gets the cases and a recipe per accuracy case for its inputs (what
`generate_<op>.py` serves), the GPU side the pinned upstream file and its loader. Its one source
is `templates/atk_support.py.j2` and the op spec; `autotune lint` fails on a stale file and
`autotune lint --fix` renders it again.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Literal

import torch

from ops import all_ops
from ops.spec import OpSpec, Upstream

from .generated_block import template
from .pyliteral import format_literal

Side = Literal["npu", "gpu"]
NPU: Side = "npu"
GPU: Side = "gpu"
#: Module constants of an op (or of the module it takes them from) that the APIs pass.
MODULE_CONSTANTS = ("PADDING_VALUE", "EPS")
#: Op spec attributes the APIs pass, and the names the support file gives them.
SPEC_CONSTANTS = {"eps": "EPS", "dropout_ratio": "DROPOUT_RATIO", "seed": "SEED"}


def support_name(op: str) -> str:
    return f"{op}_support.py"


def constants(spec: OpSpec) -> dict[str, Any]:
    """Name -> value of the constants the op's cases use, as the support file names them."""
    module = importlib.import_module(type(spec).__module__)
    found = {name: getattr(module, name) for name in MODULE_CONSTANTS if hasattr(module, name)}
    found |= {new: getattr(spec, old) for old, new in SPEC_CONSTANTS.items() if hasattr(spec, old)}
    return dict(sorted(found.items()))


def _recipe(value: Any) -> tuple:
    """How the support file makes one input: seeded values, exact integer data, or a scalar."""
    if not isinstance(value, torch.Tensor):
        return ("value", value)
    dtype = str(value.dtype).removeprefix("torch.")
    if value.is_floating_point() and value.dim() > 0:
        return ("randn", list(value.shape), dtype)
    if value.dim() == 0:
        return ("value", value.item())
    return ("tensor", _ints(value.flatten().tolist()), list(value.shape), dtype)


def _ints(values: list[int]) -> str:
    """Integers as one space-separated string: a long list stays one line in the file."""
    return " ".join(str(int(v)) for v in values)


def input_recipes(spec: OpSpec) -> dict[str, list[tuple]]:
    """Accuracy case -> the recipe of each input, in the API's order."""
    recipes = {}
    for case in spec.cases("accuracy"):
        inputs = spec.make_inputs(case, torch.device("cpu"), 0)
        recipes[case.name] = [_recipe(inputs[name]) for name in spec.input_names]
    return recipes


def _upstream(spec: OpSpec) -> dict[str, Any]:
    """The pinned upstream of the op's GPU side. Where the op's own module names another pinned
    file (`UPSTREAM_FILE`: the kernels an upstream wrapper calls, the wrapper itself importing
    its package by name), that file is loaded and the op's own file only checked."""
    up, source = spec.upstream, spec.upstream.source
    loaded = getattr(importlib.import_module(type(spec).__module__), "UPSTREAM_FILE", up)
    if not isinstance(loaded, Upstream) or loaded.file == up.file:
        loaded = up
    checked = [] if loaded is up else [[up.file, up.sha256]]
    return {
        "repo": source.repo,
        "commit": source.commit,
        "wheel": source.wheel,
        "wheel_version": source.wheel_version,
        "package": source.package,
        "setting": source.setting,
        "imports": [list(entry) for entry in source.imports],
        "checked": checked,
        "file": loaded.file,
        "sha256": loaded.sha256,
    }


def render_support(op: str, side: Side) -> str:
    """The text of `<op>_support.py` for one side (NPU or GPU) of the op's folder."""
    spec = all_ops()[op]
    values = {
        "op": op,
        "side": side.upper(),
        "constants": {k: format_literal(v) for k, v in constants(spec).items()},
        "cases": "",
        "upstream": None,
    }
    if side == NPU:
        cases = {
            kind: [
                {
                    "name": c.name,
                    "shape": c.shape,
                    "dtype": c.dtype,
                    "lengths": _ints(list(c.lengths)),
                }
                for c in spec.cases(kind)
            ]
            for kind in ("accuracy", "performance")
        }
        values |= {
            "cases": format_literal(cases, prefix=len("CASES = ")),
            "input_names": format_literal(list(spec.input_names), prefix=len("INPUT_NAMES = ")),
            "inputs": format_literal(input_recipes(spec), prefix=len("INPUTS = ")),
        }
    else:
        up = spec.upstream
        values |= {
            "upstream": {
                "repo": up.source.repo,
                "commit": up.source.commit,
                "name": up.source.name.replace("-", "_"),
            },
            "upstream_literal": format_literal(_upstream(spec), prefix=len("UPSTREAM = ")),
        }
    # At most two blank lines in a row, one newline at the end: as `ruff format` writes it.
    text = template("atk_support.py.j2").render(**values)
    return re.sub(r"\n{4,}", "\n\n\n", text).rstrip("\n") + "\n"
