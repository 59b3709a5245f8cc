"""What a study's numbers depend on beyond the config: the compilers and runtimes, and what the
port launches. Part of a study's identity (a Triton, triton-ascend, torch, torch_npu, CANN or
bishengir upgrade, or an edited kernel, starts new studies instead of reusing old winners), and
what makes a frozen config stale.

What the port launches is a fingerprint of the kernel, not of the file it sits in: the
`@triton.jit` source of the kernel and of the jit functions it calls, and the arguments of every
launch of it (a `kernel[grid](...)` call, or one through a launcher that takes the kernel as an
argument), each as `ast.unparse` writes it without docstrings, so comments and formatting do
not count. A launcher refactor that launches the same kernels with the same arguments leaves
configs current; the grid (run-time sizes) is not part of it. The launch arguments are source
text: renaming a variable passed at the launch changes the fingerprint, and what helpers of the
launcher compute before the launch does not.

A second fingerprint covers the module functions that a launch's arguments call, and those they
call (`FLAT=_flat(precision, a.dtype, a.device)`: a changed `_flat` changes what compiles
without changing the launch's text). It is recorded from 2026-12-03 on; a config tuned before
has none and is judged by the rest.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from core.errors import UserError
from core.paths import performance_json, port_file

from ..atk.performance_json import frozen_sections
from ..atk.performance_json import read as read_performance_json
from ..backends import Backend

#: The entries of `Backend.versions()` that change what a config compiles to or how it runs.
VERSION_KEYS = ("triton", "torch", "torch_npu", "cann", "bishengir", "cuda_runtime")
#: The key of the launch fingerprint in a toolchain; "launchers", the hash of the whole port file
#: that came before it, changed with refactors that launched nothing else.
LAUNCH = "launch"
#: The key of the fingerprint of the module functions the launch arguments call.
HELPERS = "launch_helpers"


def _is_jit(node: ast.FunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in node.decorator_list)


def _without_docstrings(node: ast.AST) -> ast.AST:
    for child in ast.walk(node):
        body = getattr(child, "body", None)
        if (
            isinstance(child, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            child.body = body[1:] or [ast.Pass()]
    return node


def _parse(source: str, kernel: str) -> tuple[ast.Module, dict[str, ast.FunctionDef]]:
    """The docstring-free module and its `@triton.jit` functions, which must hold `kernel`."""
    tree = _without_docstrings(ast.parse(source))
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    jit = {n.name: n for n in functions if _is_jit(n)}
    if kernel not in jit:
        raise KeyError(kernel)
    return tree, jit


def _launches(tree: ast.Module, kernel: str, jit: dict) -> list[tuple[ast.Call, list[ast.AST]]]:
    """Each launch of `kernel` and its argument expressions: a `kernel[grid](...)` call (or
    `fn[grid](...)` of a launcher given the kernel), or a call passing the kernel
    (`_launch("fwd", kernel, ..., transpose=True)`)."""
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = node.func.value if isinstance(node.func, ast.Subscript) else None
        direct = isinstance(callee, ast.Name) and (callee.id == kernel or callee.id not in jit)
        passes = any(isinstance(a, ast.Name) and a.id == kernel for a in node.args)
        if direct or passes:
            out.append((node, [*node.args, *(k.value for k in node.keywords)]))
    return out


def _called_names(node: ast.AST) -> set[str]:
    return {
        c.func.id
        for c in ast.walk(node)
        if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
    }


def launch_source(source: str, kernel: str) -> str:
    """The normalised text the launch fingerprint of `kernel` (a `@triton.jit` function of the
    port `source`) hashes: its jit source and the jit functions it calls, then its launches."""
    tree, jit = _parse(source, kernel)
    seen, todo = [], [kernel]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.append(name)
        todo += sorted(_called_names(jit[name]) & jit.keys())
    parts = [ast.unparse(jit[name]) for name in sorted(seen)]
    launches = []
    for node, _ in _launches(tree, kernel, jit):
        if isinstance(node.func, ast.Subscript):
            arguments = [*node.args, *node.keywords]
            launches.append("launch(" + ", ".join(ast.unparse(a) for a in arguments) + ")")
        else:
            launches.append(ast.unparse(node))
    return "\n".join(parts + sorted(launches))


def helpers_source(source: str, kernel: str) -> str:
    """The normalised text of the module-level functions (not jit) that the launches of `kernel`
    call in their arguments, and of those they call in turn; empty when there are none."""
    tree, jit = _parse(source, kernel)
    module = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name not in jit}
    todo = sorted(
        {name for _, arguments in _launches(tree, kernel, jit) for a in arguments
         for name in _called_names(a)} & module.keys()
    )  # fmt: skip
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += sorted(_called_names(module[name]) & module.keys())
    return "\n".join(ast.unparse(module[name]) for name in sorted(seen))


def launch_fingerprint(op: str, kernel: str) -> str:
    """16 hex digits of sha256 over `launch_source` of the op's port (parsed again only when the
    file changed: the dashboard asks on every page)."""
    return _port_fingerprint(op, kernel, LAUNCH)


def helpers_fingerprint(op: str, kernel: str) -> str:
    """16 hex digits of sha256 over `helpers_source` of the op's port."""
    return _port_fingerprint(op, kernel, HELPERS)


def _port_fingerprint(op: str, kernel: str, part: str) -> str:
    path = port_file(op)
    stat = path.stat()
    return _fingerprint(str(path), stat.st_mtime_ns, stat.st_size, kernel, part)


@functools.lru_cache(maxsize=1024)
def _fingerprint(path: str, mtime_ns: int, size: int, kernel: str, part: str) -> str:
    normalise = launch_source if part == LAUNCH else helpers_source
    try:
        text = normalise(Path(path).read_text(encoding="utf-8"), kernel)
    except SyntaxError as exc:
        raise UserError(f"{path} is not valid Python ({exc.msg}, line {exc.lineno})") from None
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def toolchain(backend: Backend, op: str, kernel: str) -> dict[str, str]:
    """The versions that matter on this backend, and the launch fingerprint of one port kernel
    (a `@triton.jit` function name)."""
    versions = backend.versions()
    found = {key: str(versions[key]) for key in VERSION_KEYS if key in versions}
    return {**found, **_port_fingerprints(op, kernel)}


def _port_fingerprints(op: str, kernel: str) -> dict[str, str]:
    return {LAUNCH: launch_fingerprint(op, kernel), HELPERS: helpers_fingerprint(op, kernel)}


def fingerprint(chain: dict[str, str]) -> str:
    """A short name of a toolchain, for study names."""
    return hashlib.sha256(json.dumps(chain, sort_keys=True).encode()).hexdigest()[:8]


def differences(recorded: dict[str, str] | None, current: dict[str, str]) -> list[str]:
    """Why a number recorded under `recorded` may not hold under `current`, one short phrase per
    change: `key a -> b` for a version, "kernel or launch arguments changed" for the launch
    fingerprint, "a function computing launch arguments changed" for the helpers' one (where
    recorded), "unrecorded" for a number from before toolchains were recorded. Only the keys of
    `current` count (a check without a device knows only the port's fingerprints)."""
    if not recorded:
        return ["toolchain unrecorded"]
    out = []
    for key in sorted(current):
        if recorded.get(key) == current[key]:
            continue
        if key == HELPERS:
            if HELPERS in recorded:
                out.append("a function computing launch arguments changed")
        elif key != LAUNCH:
            out.append(f"{key} {recorded.get(key, '-')} -> {current[key]}")
        elif LAUNCH in recorded:
            out.append("kernel or launch arguments changed")
        else:
            out.append("tuned before launch fingerprints were recorded")
    return out


@dataclass(frozen=True)
class Stale:
    """A frozen config whose numbers may have moved, and why."""

    soc: str
    kernel: str
    case: str
    reasons: tuple[str, ...]


def stale_configs(
    spec, versions: dict[str, str] | None = None, soc: str | None = None
) -> list[Stale]:
    """The frozen configs of an op (on one soc, or all) that are stale: their kernel's launch
    fingerprint changed since they were tuned, or, where `versions` (`Backend.versions()`) are
    given, a compiler or runtime version did."""
    found = {key: str(versions[key]) for key in VERSION_KEYS if versions and key in versions}
    fingerprints = {k.name: _port_fingerprints(spec.name, k.port_kernel) for k in spec.kernels}
    out = []
    sections = frozen_sections(read_performance_json(performance_json(spec.name)))
    for case, by_soc in sorted(sections.items()):
        for frozen_soc, section in sorted(by_soc.items()):
            if soc is not None and frozen_soc != soc:
                continue
            for kernel, entry in sorted(section.get("kernels", {}).items()):
                if kernel not in fingerprints:
                    continue
                current = {**found, **fingerprints[kernel]}
                reasons = differences(entry.get("toolchain"), current)
                if reasons:
                    out.append(Stale(frozen_soc, kernel, case, tuple(reasons)))
    return out


def stale_line(op: str, stale: list[Stale]) -> str | None:
    """One short line for an op's stale configs: how many, of which kernels, and why."""
    if not stale:
        return None
    kernels = sorted({s.kernel for s in stale})
    reasons = sorted({r for s in stale for r in s.reasons})
    return (
        f"stale: {op}: {len(stale)} frozen config{'s' if len(stale) != 1 else ''} "
        f"({', '.join(kernels)}): {'; '.join(reasons)}; tune them again"
    )
