"""The house has one direction: every import goes down a layer or stays in its own unit.

From the ground floor up: `core`; `ops` and `storage` (siblings: neither imports the other);
`autotuner`, its stages in the order the data flows; `api` and the public `autotune`; the command
line (`autotune.cli`, which serves `api` too) on top, and `python -m autotuner`, which starts it.
Every import counts, at module level and inside functions, and no modules may import each other in
a cycle, however long. No module of `autotuner` is over 500 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("core", "ops", "storage", "autotuner", "api", "autotune")
#: Units from the ground floor up; a module may import within its unit or from a lower rank.
#: Units of one rank are siblings and import nothing of each other.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("ops", "storage"),
    ("autotuner",),  # the root modules: the package itself and its settings
    ("autotuner.backends",),
    ("autotuner.atk",),
    ("autotuner.cases",),
    ("autotuner.measure",),
    ("autotuner.references",),
    ("autotuner.verify",),
    ("autotuner.search",),
    ("autotuner.baseline",),
    ("autotuner.freeze",),
    ("autotuner.report",),
    ("api", "autotune"),
    ("autotune.cli",),  # the command line: the stages, and `autotune serve` the API
    ("autotuner.__main__",),
)
MAX_LINES = 500

Graph = dict[str, set[str]]


def find_modules(root: Path, packages: tuple[str, ...]) -> dict[str, Path]:
    """Module name -> file, for every Python file of the packages (a package by its __init__)."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is one of our modules."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imported_names(name: str, path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name imported from it or None) of every import in the file, module level
    and functions alike, relative ones made absolute."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            found += [(node.lineno, base, alias.name) for alias in node.names]
    return found


def imports_of(name: str, modules: dict[str, Path]) -> set[str]:
    """Our modules that `name` imports: a `from` import names a module or an attribute of one."""
    found = set()
    for _, module, attribute in _imported_names(name, modules[name]):
        if attribute and f"{module}.{attribute}" in modules:
            found.add(f"{module}.{attribute}")
        else:
            found.add(_known(module, modules))
    return {target for target in found if target and target != name}


def import_graph(root: Path, packages: tuple[str, ...]) -> Graph:
    modules = find_modules(root, packages)
    return {name: imports_of(name, modules) for name in modules}


def _top_level_names(path: Path) -> set[str]:
    """Names a module binds at its top level: what `from module import name` may ask for."""
    names: set[str] = set()
    statements = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.If | ast.Try | ast.With):
            statements += [
                *node.body,
                *getattr(node, "orelse", ()),
                *getattr(node, "finalbody", ()),
            ]
            statements += [s for h in getattr(node, "handlers", ()) for s in h.body]
    return names


def missing_modules(
    root: Path, packages: tuple[str, ...], others: tuple[str, ...] = ()
) -> list[str]:
    """`file:line name` for each import of the packages (from their modules and from the Python
    files under `others`) that names no module or module attribute of them: a module that moved
    away, which an installed copy elsewhere must not answer for."""
    modules = find_modules(root, packages)
    files = [(name, path) for name, path in modules.items()]
    files += [("", path) for folder in others for path in sorted((root / folder).rglob("*.py"))]
    found = set()
    for name, path in files:
        for line, module, attribute in _imported_names(name, path):
            if module.split(".")[0] not in packages:
                continue
            if module not in modules:
                found.add(f"{path.relative_to(root)}:{line} {module}")
            elif (
                attribute
                and f"{module}.{attribute}" not in modules
                and attribute not in _top_level_names(modules[module])
            ):
                found.add(f"{path.relative_to(root)}:{line} {module}.{attribute}")
    return sorted(found)


def _unit(name: str, layers: tuple[tuple[str, ...], ...]) -> tuple[str, int]:
    """(unit, rank) of a module: the longest unit name it is or lies under."""
    matches = [
        (len(unit), unit, rank)
        for rank, units in enumerate(layers)
        for unit in units
        if name == unit or name.startswith(unit + ".")
    ]
    assert matches, f"{name} is in no layer: add its package to LAYERS"
    _, unit, rank = max(matches)
    return unit, rank


def upward_imports(graph: Graph, layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """`a -> b` for each import of a module of another unit that is not of a lower rank."""
    found = []
    for source, targets in sorted(graph.items()):
        unit, rank = _unit(source, layers)
        for target in sorted(targets):
            target_unit, target_rank = _unit(target, layers)
            if target_unit != unit and target_rank >= rank:
                found.append(f"{source} -> {target} ({unit} may not import {target_unit})")
    return found


def import_cycles(graph: Graph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_no_import_goes_up():
    assert upward_imports(import_graph(ROOT, PACKAGES), LAYERS) == []


def test_every_import_names_a_module():
    assert missing_modules(ROOT, PACKAGES, ("tests", "benchmarks", "experimental")) == []


def test_the_engine_imports_neither_the_api_nor_the_command_line():
    """`autotuner` lies below `api` and `autotune`; only `python -m autotuner` starts the CLI."""
    graph = import_graph(ROOT, PACKAGES)
    up = [
        f"{source} -> {target}"
        for source, targets in sorted(graph.items())
        if source.split(".")[0] == "autotuner" and source != "autotuner.__main__"
        for target in sorted(targets)
        if target.split(".")[0] in ("api", "autotune")
    ]
    assert up == []
    assert graph["autotuner.__main__"] == {"autotune.cli"}


def test_no_import_cycle():
    assert import_cycles(import_graph(ROOT, PACKAGES)) == []


def test_no_autotuner_module_over_500_lines():
    long = {
        str(path.relative_to(ROOT)): lines
        for path in (ROOT / "autotuner").rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_the_checks_see_an_upward_import_a_cycle_and_a_missing_module(tmp_path):
    files = {
        "low/__init__.py": "",
        "low/base.py": "def f():\n    from high.top import g\n",
        "mid/__init__.py": "",
        "mid/a.py": "from . import b\n\nx = 1\n",
        "mid/b.py": "def h():\n    from .a import x\n",
        "side/__init__.py": "from mid.a import x\n",
        "high/__init__.py": "",
        "high/top.py": "from mid.b import h\nimport side\nfrom mid.gone import y\nfrom mid import a, c\ng = 1\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = import_graph(tmp_path, ("low", "mid", "side", "high"))
    layers = (("low",), ("mid", "side"), ("high",))
    assert upward_imports(graph, layers) == [
        "low.base -> high.top (low may not import high)",
        "side -> mid.a (side may not import mid)",
    ]
    assert import_cycles(graph) == [["mid.a", "mid.b"]]
    assert missing_modules(tmp_path, ("low", "mid", "side", "high")) == [
        "high/top.py:3 mid.gone",
        "high/top.py:4 mid.c",
    ]
