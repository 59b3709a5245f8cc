# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Rendered by `autotune lint --fix` from autotuner/templates/atk_support.py.j2; do not edit by hand.
"""What the GPU folder of silu needs besides torch and triton, so it runs copied alone:
ATK's API classes (or stand-ins where ATK is not installed), the cases' constants, and the pinned upstream loader."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import types
from pathlib import Path

try:
    from atk.configs.dataset_config import InputDataset
    from atk.tasks.api_execute import register
    from atk.tasks.api_execute.base_api import BaseApi

    ATK_AVAILABLE = True
except ImportError:
    ATK_AVAILABLE = False

    class InputDataset:  # type: ignore[no-redef]
        """What ATK hands an API: positional tensors in `args`, the rest in `kwargs`."""

        def __init__(self, args: list, kwargs: dict | None = None) -> None:
            self.args = args
            self.kwargs = kwargs or {}

    class BaseApi:  # type: ignore[no-redef]
        def __init__(self, dataset: InputDataset | None = None) -> None:
            self.dataset = dataset

    def register(name: str):  # type: ignore[no-redef]
        def keep(cls):
            cls.atk_name = name
            return cls

        return keep


#: The pinned upstream: NVIDIA/recsys-examples at 43465aeabf61515e28d74cbb5234ff7c627dcc19.
UPSTREAM = {
    "repo": "NVIDIA/recsys-examples",
    "commit": "43465aeabf61515e28d74cbb5234ff7c627dcc19",
    "wheel": "",
    "wheel_version": "",
    "package": "",
    "setting": "AUTOTUNE_RECSYS_EXAMPLES",
    "imports": [
        [
            "commons.ops.triton_ops.common",
            "examples/commons/ops/triton_ops/common.py",
            "b7d9758f3fad41b94d56b4dc8e94bf4c20bb3c85a921d53bbeb4e15b7745be13",
        ],
    ],
    "checked": [],
    "file": "examples/hstu/ops/triton_ops/triton_silu.py",
    "sha256": "3d2b625a00a213ceff07a9801aa4b20c17fd456fbfb953af3f8f61e310d3bab1",
}


def _root() -> Path:
    """Where upstream's files are: the installed wheel's package (found without importing it),
    or the checkout the environment variable names."""
    if UPSTREAM["wheel"]:
        from importlib.metadata import PackageNotFoundError, version

        want = f"{UPSTREAM['wheel']}=={UPSTREAM['wheel_version']}"
        try:
            have = version(UPSTREAM["wheel"])
        except PackageNotFoundError:
            raise ImportError(f"{want} is not installed (pip install {want})") from None
        if have != UPSTREAM["wheel_version"]:
            raise ImportError(f"{UPSTREAM['wheel']} {have} is installed; it is pinned to {want}")
        spec = importlib.util.find_spec(UPSTREAM["package"])
        if spec is None or not spec.submodule_search_locations:
            raise ImportError(f"{want} is installed but has no {UPSTREAM['package']} package")
        return Path(next(iter(spec.submodule_search_locations)))
    value = os.environ.get(UPSTREAM["setting"], "").strip()
    if not value or not Path(value).expanduser().is_dir():
        raise ImportError(
            f"{UPSTREAM['setting']} must name a checkout of {UPSTREAM['repo']} at {UPSTREAM['commit'][:12]}"
        )
    return Path(value).expanduser()


def _load(name: str, root: Path, relative: str, sha256: str) -> types.ModuleType:
    """`root/relative` as module `name`, after checking its sha256 against the pin."""
    path = root / relative
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != sha256:
        raise ImportError(f"upstream file {relative}: sha256 {actual}, pinned {sha256}")
    if name not in sys.modules:
        package, directory = name.rsplit(".", 1)[0], path.parent
        parents = []
        while package not in sys.modules and "." in package:
            parents.append((package, directory))
            package, directory = package.rsplit(".", 1)[0], directory.parent
        parents.append((package, directory))
        for package, directory in reversed(parents):
            if package not in sys.modules:  # empty packages: no upstream __init__.py runs
                sys.modules[package] = types.ModuleType(package)
                sys.modules[package].__path__ = [str(directory)]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


def load_upstream() -> types.ModuleType:
    """The upstream module, checked against its pinned sha256, under private names."""
    root = _root()
    for relative, sha256 in UPSTREAM["checked"]:  # files checked, not loaded
        actual = hashlib.sha256((root / relative).read_bytes()).hexdigest()
        if actual != sha256:
            raise ImportError(f"upstream file {relative}: sha256 {actual}, pinned {sha256}")
    top = "_recsys_examples_atk" + ("_interp" if os.environ.get("TRITON_INTERPRET") == "1" else "")
    dotted = ".".join(Path(UPSTREAM["file"]).with_suffix("").parts)
    saved = {}
    for module, relative, sha256 in UPSTREAM["imports"]:  # absolute imports upstream makes
        parts = module.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            saved.setdefault(prefix, sys.modules.get(prefix))
            sys.modules[prefix] = types.ModuleType(prefix)
            sys.modules[prefix].__path__ = []
        saved.setdefault(module, sys.modules.get(module))
        private = ".".join((top, *Path(relative).with_suffix("").parts))
        sys.modules[module] = _load(private, root, relative, sha256)
    try:
        return _load(f"{top}.{dotted}", root, UPSTREAM["file"], UPSTREAM["sha256"])
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
