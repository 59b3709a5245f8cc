"""Upstream Triton modules, loaded by path from where each upstream is found, checked by sha256.

Two upstreams (`UpstreamSource`):
- FBGEMM (`FBGEMM`): the pinned `fbgemm-gpu-cpu` wheel ships upstream's Python sources
  byte-identical to its commit. Importing `fbgemm_gpu` would run its `__init__.py`, which loads
  compiled ops built for one torch version, so each module is loaded from its file under private
  package names instead.
- NVIDIA recsys-examples (`RECSYS_EXAMPLES`): no package ships its HSTU Triton ops, so they are
  read from a local checkout of the pinned commit that the setting `AUTOTUNE_RECSYS_EXAMPLES`
  names (its root, holding `examples/`). Without it, `missing()` says so in one line.

Either way a file's bytes are checked against the hash the op spec pins before it runs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import importlib.util
import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import UserError
from .modules import load_file


@dataclass(frozen=True)
class UpstreamSource:
    """One upstream repository at a pinned commit, and where its files are found here: inside an
    installed wheel's package (`wheel`), or in a checkout named by an environment variable
    (`setting`). File paths the op specs give are relative to `root()`."""

    name: str
    repo: str
    commit: str
    license: str
    #: Where `root()` lies in the upstream repository ("" for its root), for READMEs.
    repo_dir: str = ""
    wheel: str = ""
    wheel_version: str = ""
    #: The wheel's import package (found without importing it).
    package: str = ""
    setting: str = ""
    #: Modules upstream imports by absolute name: (module name, file under root, sha256), each
    #: checked and given that name only while an upstream file that imports it loads.
    imports: tuple[tuple[str, str, str], ...] = ()
    #: Glob patterns under root of the files that hold the Triton kernels a port may cover: the
    #: files the coverage table (`ops.coverage`) lists, every `@triton.jit` function of each.
    kernel_files: tuple[str, ...] = ()

    def root(self) -> Path:
        """The folder upstream's files are read from; UserError (one line) where there is none."""
        return self._wheel_root() if self.wheel else self._checkout_root()

    def missing(self) -> str | None:
        """Why upstream's files cannot be read here (one line), or None."""
        try:
            self.root()
        except UserError as exc:
            return str(exc)
        return None

    def provenance_path(self, relative_path: str) -> str:
        """A file's path in the upstream repository, for READMEs."""
        return f"{self.repo_dir}/{relative_path}" if self.repo_dir else relative_path

    def namespace(self) -> str:
        # Triton decides interpreter vs compiler when a kernel is decorated: one copy per mode.
        base = f"_{self.name.replace('-', '_')}_upstream"
        return f"{base}_interp" if os.environ.get("TRITON_INTERPRET") == "1" else base

    def _wheel_root(self) -> Path:
        want = f"{self.wheel}=={self.wheel_version}"
        try:
            version = importlib.metadata.version(self.wheel)
        except importlib.metadata.PackageNotFoundError:
            raise UserError(f"{want} is not installed (pip install {want})") from None
        if version != self.wheel_version:
            raise UserError(
                f"{self.wheel} {version} is installed; the upstream kernels are pinned to "
                f"{self.wheel_version}"
            )
        spec = importlib.util.find_spec(self.package)
        if spec is None or not spec.submodule_search_locations:
            raise UserError(
                f"{self.wheel} is installed but its {self.package} package was not found"
            )
        return Path(next(iter(spec.submodule_search_locations)))

    def _checkout_root(self) -> Path:
        value = os.environ.get(self.setting, "").strip()
        if not value:
            raise UserError(
                f"{self.setting} is not set: upstream {self.repo} needs a checkout of "
                f"{self.commit[:12]} ({self.setting}=/path/to/checkout)"
            )
        root = Path(value).expanduser()
        if not root.is_dir():
            raise UserError(f"{self.setting}={value} is not a folder (a checkout of {self.repo})")
        return root


FBGEMM = UpstreamSource(
    name="fbgemm",
    repo="pytorch/FBGEMM",
    commit="71d6f8b229d964e61cac24df9bbd2ffcc4b4d378",
    license="BSD-3-Clause",
    repo_dir="fbgemm_gpu/fbgemm_gpu",
    wheel="fbgemm-gpu-cpu",
    wheel_version="1.9.0",
    package="fbgemm_gpu",
    kernel_files=("sll/triton/*.py", "triton/jagged/*.py"),
)
#: Its files say Apache-2.0 (Meta's, then NVIDIA's headers); the repository's LICENSE is BSD-3
#: text followed by an NVIDIA notice, so nothing of it is copied here.
RECSYS_EXAMPLES = UpstreamSource(
    name="recsys-examples",
    repo="NVIDIA/recsys-examples",
    commit="43465aeabf61515e28d74cbb5234ff7c627dcc19",
    license="Apache-2.0 (file headers)",
    setting="AUTOTUNE_RECSYS_EXAMPLES",
    kernel_files=("examples/hstu/ops/triton_ops/*.py", "examples/commons/ops/triton_ops/*.py"),
    imports=(
        (
            "commons.ops.triton_ops.common",
            "examples/commons/ops/triton_ops/common.py",
            "b7d9758f3fad41b94d56b4dc8e94bf4c20bb3c85a921d53bbeb4e15b7745be13",
        ),
    ),
)

# The FBGEMM names other modules have used since there was one upstream.
UPSTREAM_REPO = FBGEMM.repo
UPSTREAM_COMMIT = FBGEMM.commit
WHEEL, WHEEL_VERSION = FBGEMM.wheel, FBGEMM.wheel_version


def package_root() -> Path:
    """Directory of the installed `fbgemm_gpu` package, found without importing it."""
    return FBGEMM.root()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@functools.cache
def check_pinned(relative_path: str, sha256: str, source: UpstreamSource = FBGEMM) -> Path:
    """The file `<root>/<relative_path>`, after a UserError unless it is the pinned source. Once
    per process (a failed check is not kept): ops load upstream inside timed calls, where reading
    and hashing the file again (about a millisecond) would be timed as upstream's."""
    path = source.root() / relative_path
    if not path.is_file():
        where = source.setting and f"{source.setting}={source.root()}" or source.wheel
        raise UserError(f"upstream file {relative_path} is missing from {where}")
    actual = sha256_of(path)
    if actual != sha256:
        raise UserError(
            f"upstream file {relative_path} differs from the pinned source: sha256 {actual}, "
            f"pinned {sha256}"
        )
    return path


def load(relative_path: str, sha256: str, source: UpstreamSource = FBGEMM) -> types.ModuleType:
    """Load `<root>/<relative_path>` (e.g. `sll/triton/triton_jagged_softmax.py` of FBGEMM),
    checked against its pinned sha256 (`check_pinned`), under the source's private names."""
    with _absolute_imports(source):
        return _load_checked(relative_path, sha256, source)


def _load_checked(relative_path: str, sha256: str, source: UpstreamSource) -> types.ModuleType:
    path = check_pinned(relative_path, sha256, source)
    parts = Path(relative_path).with_suffix("").parts
    name = ".".join((source.namespace(), *parts))
    if name not in sys.modules:
        _packages(source.namespace(), source.root(), parts[:-1])
        load_file(name, path)
    return sys.modules[name]


def _packages(top: str, root: Path, parts: tuple[str, ...]) -> None:
    """Empty packages `top`, `top.a`, ... over the folders of a file, so relative imports
    resolve and no `__init__.py` runs."""
    package, directory = top, root
    for part in ("", *parts):
        if part:
            package, directory = f"{package}.{part}", directory / part
        if package not in sys.modules:
            stub = types.ModuleType(package)
            stub.__path__ = [str(directory)]
            sys.modules[package] = stub


@contextmanager
def _absolute_imports(source: UpstreamSource) -> Iterator[None]:
    """The modules upstream imports by absolute name, checked and loaded under a private name,
    reachable by their own names only while an upstream file loads (whatever those names meant
    before comes back after)."""
    if not source.imports:
        yield
        return
    names = {n for module, _, _ in source.imports for n in _prefixes(module)}
    saved = {n: sys.modules[n] for n in names if n in sys.modules}
    try:
        for module, relative_path, sha256 in source.imports:
            for prefix in _prefixes(module)[:-1]:
                sys.modules[prefix] = types.ModuleType(prefix)
                sys.modules[prefix].__path__ = []  # a package whose one module is set below
            sys.modules[module] = _load_checked(relative_path, sha256, source)
        yield
    finally:
        for n in names:
            sys.modules.pop(n, None)
        sys.modules.update(saved)


def _prefixes(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def provenance_path(relative_path: str, source: UpstreamSource = FBGEMM) -> str:
    """The file's path in the upstream repository, for READMEs."""
    return source.provenance_path(relative_path)
