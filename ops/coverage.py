"""Which upstream Triton kernels the ports cover: every `@triton.jit` function of each upstream
kernel file (`UpstreamSource.kernel_files`), read by `ast` (never imported), with the port op and
kernel that covers it (`KernelSpec.upstream_kernels`), or why none is needed, or "not ported".

A jit function no kernel names is "inlined" where a covered jit function of its file calls it (a
helper, compiled into the kernel that calls it, so ported with it); else the reason `NOT_NEEDED`
gives; else it is not ported.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from enum import Enum

from core.upstream import FBGEMM, RECSYS_EXAMPLES, UpstreamSource

from . import all_ops

#: (source name, file, function) -> why no port kernel is needed, for the jit functions that are
#: neither ported nor a helper of a ported kernel.
NOT_NEEDED: dict[tuple[str, str, str], str] = {
    (FBGEMM.name, "triton/jagged/triton_jagged_tensor_ops.py", "triton_jagged_to_dense"): (
        "jagged_to_dense's path for jagged tensors of more than one jagged dimension (JAGGED_DIM "
        "> 2); the ports take 2-D jagged tensors, whose path is "
        "triton_jagged_to_dense_optimization_2d"
    ),
}
SOURCES = (FBGEMM, RECSYS_EXAMPLES)


class Coverage(Enum):
    PORTED = "ported"
    INLINED = "inlined"
    NOT_NEEDED = "not needed"
    NOT_PORTED = "not ported"


@dataclass(frozen=True)
class Row:
    """One upstream jit function and what covers it."""

    source: str
    file: str
    function: str
    coverage: Coverage
    #: (op, kernel) of each port kernel that covers it (ported), or that covers its caller
    #: (inlined).
    kernels: tuple[tuple[str, str], ...] = ()
    #: The covered jit functions that call it (inlined), or why none is needed.
    note: str = ""


def _is_jit(decorator: ast.expr) -> bool:
    """`@triton.jit`, `@jit`, `@triton.jit(...)`: a decorator whose (called) name ends in jit."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "jit"


def jit_functions(source: str) -> dict[str, set[str]]:
    """Each `@triton.jit` function of a module's text, in file order, with the jit functions of
    the module its body calls."""
    tree = ast.parse(source)
    found = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and any(map(_is_jit, node.decorator_list))
    ]
    names = {node.name for node in found}
    return {
        node.name: {
            call.func.id
            for call in ast.walk(node)
            if isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id in names - {node.name}
        }
        for node in found
    }


def kernel_files(source: UpstreamSource) -> list[str]:
    """The source's kernel files, relative to its root, sorted (UserError where it is absent)."""
    root = source.root()
    paths = {p for pattern in source.kernel_files for p in root.glob(pattern) if p.is_file()}
    return sorted(str(p.relative_to(root)) for p in paths)


def _port_kernels(source: UpstreamSource) -> dict[str, list[tuple[str, str, str]]]:
    """Upstream function -> (the op's upstream file, op, kernel) of each port kernel naming it."""
    covering: dict[str, list[tuple[str, str, str]]] = {}
    for spec in all_ops().values():
        if spec.upstream.source.name != source.name:
            continue
        for kernel in spec.kernels:
            for function in kernel.upstream_kernels:
                covering.setdefault(function, []).append(
                    (spec.upstream.file, spec.name, kernel.name)
                )
    return covering


def file_rows(
    source: UpstreamSource, file: str, text: str, covering: dict[str, list[tuple[str, str, str]]],
    defined_in: dict[str, int],
) -> list[Row]:  # fmt: skip
    """The rows of one file's jit functions. A function name that several files of the source
    define is covered here only by the ops whose own upstream file this is."""
    calls = jit_functions(text)

    def ported(function: str) -> tuple[tuple[str, str], ...]:
        mine = covering.get(function, [])
        if defined_in.get(function, 0) > 1:
            mine = [m for m in mine if m[0] == file]
        return tuple((op, kernel) for _, op, kernel in mine)

    def callers(function: str, seen: frozenset[str] = frozenset()) -> dict[str, tuple]:
        """The covered jit functions that call this one, directly or through other helpers."""
        found: dict[str, tuple] = {}
        for caller, called in calls.items():
            if function in called and caller not in seen:
                kernels = ported(caller)
                if kernels:
                    found[caller] = kernels
                else:
                    found.update(callers(caller, seen | {function}))
        return found

    rows = []
    for function in calls:
        kernels = ported(function)
        if kernels:
            rows.append(Row(source.name, file, function, Coverage.PORTED, kernels))
            continue
        inlined = callers(function)
        if inlined:
            via = tuple(dict.fromkeys(k for ks in inlined.values() for k in ks))
            note = "a jit helper inlined into " + ", ".join(inlined)
            rows.append(Row(source.name, file, function, Coverage.INLINED, via, note))
            continue
        reason = NOT_NEEDED.get((source.name, file, function))
        coverage = Coverage.NOT_NEEDED if reason else Coverage.NOT_PORTED
        rows.append(Row(source.name, file, function, coverage, (), reason or ""))
    return rows


def source_rows(source: UpstreamSource) -> list[Row]:
    """The rows of every jit function of the source's kernel files (UserError where the source
    is not found here)."""
    root = source.root()
    texts = {file: (root / file).read_text(encoding="utf-8") for file in kernel_files(source)}
    functions = {file: jit_functions(text) for file, text in texts.items()}
    defined_in: dict[str, int] = {}
    for names in functions.values():
        for name in names:
            defined_in[name] = defined_in.get(name, 0) + 1
    covering = _port_kernels(source)
    return [
        row
        for file, text in texts.items()
        for row in file_rows(source, file, text, covering, defined_in)
    ]


def table(sources: tuple[UpstreamSource, ...] = SOURCES) -> tuple[list[Row], dict[str, str]]:
    """(the rows of every source found here, source name -> why it is not found here)."""
    rows: list[Row] = []
    missing: dict[str, str] = {}
    for source in sources:
        reason = source.missing()
        if reason:
            missing[source.name] = reason
        else:
            rows += source_rows(source)
    return rows, missing


def describe(row: Row) -> str:
    """What covers a row, in words, for the table."""
    kernels = ", ".join(f"{op}/{kernel}" for op, kernel in row.kernels)
    if row.coverage is Coverage.PORTED:
        return kernels
    if row.coverage is Coverage.INLINED:
        return f"{row.note} ({kernels})"
    return row.note or "not ported"
