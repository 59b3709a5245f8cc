"""FBGEMM's Triton modules, loaded by path from the pinned `fbgemm-gpu-cpu` wheel.

The wheel ships upstream's Python sources byte-identical to `UPSTREAM_COMMIT`. Importing
`fbgemm_gpu` would run its `__init__.py`, which loads compiled ops built for one torch version,
so each module is loaded from its file under private package names instead, and its bytes are
checked against the hash the op spec pins.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import types
from pathlib import Path

from .errors import UserError
from .modules import load_file

UPSTREAM_REPO = "pytorch/FBGEMM"
UPSTREAM_COMMIT = "71d6f8b229d964e61cac24df9bbd2ffcc4b4d378"
WHEEL = "fbgemm-gpu-cpu"
WHEEL_VERSION = "1.9.0"
#: Where the wheel's `fbgemm_gpu/` package lives inside the upstream repository.
REPO_PACKAGE_DIR = "fbgemm_gpu/fbgemm_gpu"


def package_root() -> Path:
    """Directory of the installed `fbgemm_gpu` package, found without importing it."""
    try:
        version = importlib.metadata.version(WHEEL)
    except importlib.metadata.PackageNotFoundError:
        raise UserError(
            f"{WHEEL}=={WHEEL_VERSION} is not installed (pip install {WHEEL}=={WHEEL_VERSION})"
        ) from None
    if version != WHEEL_VERSION:
        raise UserError(
            f"{WHEEL} {version} is installed; the upstream kernels are pinned to {WHEEL_VERSION}"
        )
    spec = importlib.util.find_spec("fbgemm_gpu")
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"{WHEEL} is installed but its fbgemm_gpu package was not found")
    return Path(next(iter(spec.submodule_search_locations)))


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _namespace() -> str:
    # Triton decides interpreter vs compiler when a kernel is decorated, so each mode gets its own copy.
    return (
        "_fbgemm_upstream_interp"
        if os.environ.get("TRITON_INTERPRET") == "1"
        else "_fbgemm_upstream"
    )


@functools.cache
def check_pinned(relative_path: str, sha256: str) -> None:
    """UserError unless `fbgemm_gpu/<relative_path>` is the pinned source. Once per process (a
    failed check is not kept): ops load upstream inside timed calls, where reading and hashing
    the file again (about a millisecond) would be timed as upstream's."""
    path = package_root() / relative_path
    if not path.is_file():
        raise UserError(f"upstream file {relative_path} is missing from {WHEEL}=={WHEEL_VERSION}")
    actual = sha256_of(path)
    if actual != sha256:
        raise UserError(
            f"upstream file {relative_path} differs from the pinned source (sha256 {actual[:12]})"
        )


def load(relative_path: str, sha256: str) -> types.ModuleType:
    """Load `fbgemm_gpu/<relative_path>` (e.g. `sll/triton/triton_jagged_softmax.py`), checked
    against its pinned sha256 (`check_pinned`)."""
    check_pinned(relative_path, sha256)
    parts = Path(relative_path).with_suffix("").parts
    name = ".".join((_namespace(), *parts))
    if name in sys.modules:
        return sys.modules[name]
    root = package_root()
    package, directory = _namespace(), root
    for part in ("", *parts[:-1]):
        if part:
            package, directory = f"{package}.{part}", directory / part
        if package not in sys.modules:
            stub = types.ModuleType(package)
            stub.__path__ = [str(directory)]  # relative imports resolve, __init__.py never runs
            sys.modules[package] = stub
    return load_file(name, root / relative_path)


def provenance_path(relative_path: str) -> str:
    """The file's path in the upstream repository, for READMEs."""
    return f"{REPO_PACKAGE_DIR}/{relative_path}"
