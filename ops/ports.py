"""Load an op's port (`npu_atk_test/<op>.py`) by path: ATK folders are not Python packages."""

from __future__ import annotations

import os
import sys
import types
import warnings

from core.errors import UserError
from core.modules import load_file
from core.paths import port_file


def module_name(op: str) -> str:
    # Triton fixes interpreter vs compiler when a kernel is decorated: one module per mode.
    mode = "interp" if os.environ.get("TRITON_INTERPRET") == "1" else "device"
    return f"_autotune_ports_{mode}.{op}"


def load_port(op: str, *, fresh: bool = False) -> types.ModuleType:
    """The port module of `op`; `fresh` re-reads the file (after a freeze rewrote it)."""
    name = module_name(op)
    if not fresh and name in sys.modules:
        return sys.modules[name]
    path = port_file(op)
    if not path.is_file():
        raise UserError(f"port of {op} not found at {path}")
    try:
        return load_file(name, path)
    except SyntaxError as exc:
        raise UserError(
            f"port of {op} at {path} is not valid Python: {exc.msg} (line {exc.lineno})"
        ) from None


def picked_config(
    port: types.ModuleType, soc: str, kernel: str, shape: dict, dtype: str, default: dict
) -> tuple[dict, list[Warning]]:
    """The config the launchers of `port` pick on `soc` for a call (the generated block's lookup,
    uncached) and the warnings it gave: the nearest-case one, said once per kernel and soc by a
    launcher, is given on every call here."""
    port._WARNED.discard((kernel, soc))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = port._pick(soc, kernel, shape, dtype, default)
    return config, [w.message for w in caught]
