"""Loading a Python file as a module under a chosen name (ATK folders and wheels are not packages)."""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path


def load_file(name: str, path: Path) -> types.ModuleType:
    """Execute `path` as module `name`, registered in sys.modules only if it loads."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module
