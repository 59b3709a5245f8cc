"""`autotune lint`: check ATK folders against the layout of DESIGN.md and the migration RFC."""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from itertools import zip_longest
from pathlib import Path

import yaml

from core.errors import UserError
from core.files import write_files

from . import performance_json
from .generated_block import BEGIN_MARKER, END_MARKER, read_frozen, replace_block
from .store import FrozenStore
from .support import GPU, NPU, Side, render_support, support_name

YAML_FIELDS = (
    "name",
    "api",
    "version",
    "api_type",
    "triton_api_type",
    "generate",
    "dtype_numbers",
    "outputs",
    "standard",
)
PROVENANCE_FIELDS = ("repository", "commit", "file", "lines")
LICENSE_LINES = 6  # the header must sit in the first lines of a file
#: What a folder's Python files may import besides the standard library and the files beside them.
ALONE_IMPORTS = frozenset({"torch", "triton", "atk"})


@dataclass(frozen=True)
class Problem:
    path: Path
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def npu_files(op: str) -> tuple[str, ...]:
    return (
        f"{op}.py",
        f"{op}_api.py",
        support_name(op),
        f"{op}.yaml",
        f"generate_{op}.py",
        f"{op}_performance.json",
    )


def gpu_files(op: str) -> tuple[str, ...]:
    return (f"{op}.py", f"{op}_api.py", support_name(op))


def _listing(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.name != "__pycache__")


def _check_license(path: Path) -> list[Problem]:
    head = "\n".join(
        path.read_text(encoding="utf-8", errors="replace").splitlines()[:LICENSE_LINES]
    )
    problems = []
    if "Copyright (c)" not in head:
        problems.append(
            Problem(
                path, f"license header: no 'Copyright (c)' line in the first {LICENSE_LINES} lines"
            )
        )
    if (
        "Apache License, Version 2.0" not in head
        and "SPDX-License-Identifier: Apache-2.0" not in head
    ):
        problems.append(
            Problem(
                path, f"license header: no Apache-2.0 notice in the first {LICENSE_LINES} lines"
            )
        )
    return problems


def _parse_python(path: Path) -> tuple[ast.Module | None, list[Problem]]:
    try:
        return ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), []
    except SyntaxError as exc:
        return None, [Problem(path, f"not valid Python: {exc.msg} (line {exc.lineno})")]


def _atk_imports_guarded(tree: ast.Module) -> bool:
    """True unless an `atk` import sits outside a try whose handlers catch ImportError."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
            isinstance(h.type, ast.Name) and h.type.id in {"ImportError", "ModuleNotFoundError"}
            for h in node.handlers
        ):
            for inner in node.body:
                guarded.update(id(n) for n in ast.walk(inner))
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        if any(n == "atk" or n.startswith("atk.") for n in names) and id(node) not in guarded:
            return False
    return True


def _check_readme(path: Path, op: str, expected: dict[str, str] | None) -> list[Problem]:
    if not path.is_file():
        return [
            Problem(path, "missing (provenance, what the op computes, constraints, ATK commands)")
        ]
    fields: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].lower() in PROVENANCE_FIELDS:
            fields[cells[0].lower()] = cells[1]
    problems = [
        Problem(path, f"provenance: no '| {f} | ... |' row")
        for f in PROVENANCE_FIELDS
        if f not in fields
    ]
    if "commit" in fields and not re.fullmatch(r"[0-9a-f]{40}", fields["commit"]):
        problems.append(
            Problem(path, f"provenance: commit {fields['commit']!r} is not a 40-hex commit id")
        )
    if "lines" in fields:
        m = re.fullmatch(r"(\d+)-(\d+)", fields["lines"])
        if not m or int(m.group(1)) > int(m.group(2)):
            problems.append(
                Problem(path, f"provenance: lines {fields['lines']!r} is not a range like 17-864")
            )
    for key, want in (expected or {}).items():
        if key in fields and fields[key] != want:
            problems.append(
                Problem(path, f"provenance: {key} is {fields[key]!r}, the op spec says {want!r}")
            )
    return problems


def _check_yaml(path: Path, op: str, outputs: int | None) -> list[Problem]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        return [Problem(path, f"not valid YAML: {str(exc).splitlines()[0]}")]
    if not isinstance(data, dict):
        return [Problem(path, "must be a mapping of ATK case fields")]
    problems = [Problem(path, f"field '{f}' is missing") for f in YAML_FIELDS if f not in data]
    for key in ("name", "api_type", "triton_api_type"):
        if key in data and data[key] != op:
            problems.append(Problem(path, f"{key} is {data[key]!r}, must name the op {op!r}"))
    if "api" in data and data["api"] != "pytorch":
        problems.append(Problem(path, f"api is {data['api']!r}, must be 'pytorch'"))
    if "generate" in data and data["generate"] != f"generate_{op}":
        problems.append(Problem(path, f"generate is {data['generate']!r}, must be 'generate_{op}'"))
    if "dtype_numbers" in data and not (
        isinstance(data["dtype_numbers"], int) and data["dtype_numbers"] >= 1
    ):
        problems.append(Problem(path, "dtype_numbers must be an integer >= 1"))
    if "outputs" in data:
        if not (isinstance(data["outputs"], int) and data["outputs"] >= 0):
            problems.append(Problem(path, "outputs must be an integer >= 0"))
        elif outputs is not None and data["outputs"] != outputs:
            problems.append(
                Problem(path, f"outputs is {data['outputs']}, the op spec has {outputs} outputs")
            )
    if "standard" in data and not (
        isinstance(data["standard"], dict) and "acc" in data["standard"]
    ):
        problems.append(Problem(path, "standard must be a mapping with an 'acc' entry"))
    return problems


def _check_performance_json(path: Path, op: str) -> list[Problem]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        return [Problem(path, f"not valid JSON: {exc.msg} (line {exc.lineno})")]
    if (
        not isinstance(data, dict)
        or data.get("op") != op
        or not isinstance(data.get("cases"), list)
    ):
        return [Problem(path, f"must be an object with op {op!r} and a list of cases")]
    return [
        Problem(path, f"case {i} needs name, shape and dtype")
        for i, case in enumerate(data["cases"])
        if not (isinstance(case, dict) and {"name", "shape", "dtype"} <= case.keys())
    ]


def _check_frozen_agree(kernel: Path, performance: Path, op: str) -> list[Problem]:
    """The block's FROZEN_CONFIGS is a rendering of the performance json's frozen configs (their
    one home, `FrozenStore`): a (soc, kernel, case) on one side only, or with another config or
    shape, is a problem. A file damaged in itself is its own checks' problem."""
    try:
        held = read_frozen(kernel.read_text(encoding="utf-8"), kernel)
        stored = FrozenStore.of(op, performance_json.read(performance)).block()
    except UserError:
        return []

    def flat(frozen: dict) -> dict[str, object]:
        return {
            f"{soc} {name} {e.get('case')}": e
            for soc, kernels in frozen.items()
            for name, entries in kernels.items()
            for e in entries
        }

    block, json_ = flat(held), flat(stored)
    differ = sorted(k for k in block.keys() | json_.keys() if block.get(k) != json_.get(k))
    if not differ:
        return []
    more = f" and {len(differ) - 1} more" if len(differ) > 1 else ""
    return [
        Problem(
            kernel,
            f"generated block: FROZEN_CONFIGS disagrees with {performance.name} at {differ[0]}"
            f"{more}; `autotune freeze` renders the block from the json",
        )
    ]


def _check_kernel_file(path: Path) -> list[Problem]:
    tree, problems = _parse_python(path)
    if tree is None:
        return problems
    lines = path.read_text(encoding="utf-8").splitlines()
    begins, ends = lines.count(BEGIN_MARKER), lines.count(END_MARKER)
    if begins != 1 or ends != 1 or lines.index(END_MARKER) < lines.index(BEGIN_MARKER):
        problems.append(
            Problem(
                path,
                f"generated block: need one begin and one end marker line, found {begins} and {ends}",
            )
        )
    else:
        source = path.read_text(encoding="utf-8")
        try:
            rendered = replace_block(source, read_frozen(source, path), path)
            if rendered != source:
                line = _first_difference(source, rendered)
                problems.append(
                    Problem(
                        path,
                        f"generated block: line {line} differs from what `autotune freeze` writes (edited by hand?)",
                    )
                )
        except UserError as exc:
            problems.append(Problem(path, f"generated block: {str(exc).removeprefix(f'{path}: ')}"))
    if not any(
        isinstance(n, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in n.decorator_list)
        for n in tree.body
    ):
        problems.append(Problem(path, "no @triton.jit kernel"))
    return problems


def _check_api(path: Path) -> list[Problem]:
    tree, problems = _parse_python(path)
    if tree is not None and not _atk_imports_guarded(tree):
        problems.append(
            Problem(
                path,
                "imports atk unguarded; it must import without ATK (try/except ImportError or the folder's support file)",
            )
        )
    return problems


def _imported(tree: ast.Module) -> set[str]:
    """The top-level packages a module imports by absolute name."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _check_imports(path: Path) -> list[Problem]:
    """A folder's Python file imports only the standard library, torch, triton, ATK and the
    files beside it: copied out of this repository, it must still import."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return []  # reported once, by the file's own check
    beside = {p.stem for p in path.parent.glob("*.py")}
    found = _imported(tree) - ALONE_IMPORTS - beside - set(sys.stdlib_module_names)
    return [
        Problem(path, f"imports {name}: a folder copied alone has only torch, triton and its files")
        for name in sorted(found)
    ]


def _first_difference(have: str, want: str) -> int:
    pairs = zip_longest(have.splitlines(True), want.splitlines(True))
    return next(i for i, (a, b) in enumerate(pairs, 1) if a != b)


def _check_support(path: Path, op: str, side: Side) -> list[Problem]:
    have, want = path.read_text(encoding="utf-8"), render_support(op, side)
    if have == want:
        return []
    line = _first_difference(have, want)
    return [Problem(path, f"line {line} differs from its rendering (run `autotune lint --fix`)")]


def _check_side(
    folder: Path, expected: tuple[str, ...], forbidden: tuple[str, ...]
) -> list[Problem]:
    if not folder.is_dir():
        return [Problem(folder, "missing folder")]
    problems = [
        Problem(folder / name, "missing") for name in expected if not (folder / name).is_file()
    ]
    for path in _listing(folder):
        if path.name in expected:
            continue
        if any(re.fullmatch(pattern, path.name) for pattern in forbidden):
            problems.append(
                Problem(
                    path,
                    "does not belong on the GPU side (no yaml, generator or performance json there)",
                )
            )
        else:
            problems.append(
                Problem(path, f"unexpected file; {folder.name}/ holds only {', '.join(expected)}")
            )
    return problems


def lint_op_folder(folder: Path) -> list[Problem]:
    """Every problem of one `experimental/triton/atk_test/<op>/` folder."""
    from ops import all_ops

    op = folder.name
    spec = all_ops().get(op)
    problems: list[Problem] = []
    if spec is None:
        problems.append(Problem(folder, f"no op spec: add ops/{op}.py defining SPEC"))
        expected, outputs = None, None
    else:
        expected = {
            "repository": f"https://github.com/{spec.upstream.source.repo}",
            "commit": spec.upstream.source.commit,
            "file": spec.upstream.source.provenance_path(spec.upstream.file),
            "lines": spec.upstream.lines,
        }
        outputs = len(spec.output_names)
    problems += _check_readme(folder / "README.md", op, expected)
    npu, gpu = folder / "npu_atk_test", folder / "gpu_atk_test"
    problems += _check_side(npu, npu_files(op), ())
    problems += _check_side(gpu, gpu_files(op), (r".*\.ya?ml", r"generate_.*\.py", r".*\.json"))
    for path in [*(npu / n for n in npu_files(op)), *(gpu / n for n in gpu_files(op))]:
        if path.is_file() and path.suffix == ".py":
            problems += _check_license(path) + _check_imports(path)
    if (npu / f"{op}.py").is_file():
        problems += _check_kernel_file(npu / f"{op}.py")
    for side in (npu, gpu):
        if (side / f"{op}_api.py").is_file():
            problems += _check_api(side / f"{op}_api.py")
    if spec is not None:
        for side, name in ((npu, NPU), (gpu, GPU)):
            if (side / support_name(op)).is_file():
                problems += _check_support(side / support_name(op), op, name)
    if (npu / f"{op}.yaml").is_file():
        problems += _check_yaml(npu / f"{op}.yaml", op, outputs)
    performance = npu / f"{op}_performance.json"
    if performance.is_file():
        malformed = _check_performance_json(performance, op)
        problems += malformed
        if not malformed and (npu / f"{op}.py").is_file():
            problems += _check_frozen_agree(npu / f"{op}.py", performance, op)
    return problems


def _op_folders(path: Path) -> list[Path]:
    """`path` itself if it is an op folder, else the folders under it."""
    if (
        (path / "npu_atk_test").exists()
        or (path / "gpu_atk_test").exists()
        or (path / "README.md").exists()
    ):
        return [path]
    return [p for p in _listing(path) if p.is_dir()]


def lint(path: Path) -> list[Problem]:
    """Lint one op folder, or every op folder under `path`."""
    if not path.is_dir():
        return [Problem(path, "not a folder")]
    folders = _op_folders(path)
    if not folders:
        return [Problem(path, "holds no op folders")]
    return [problem for folder in folders for problem in lint_op_folder(folder)]


def fix(path: Path) -> list[Path]:
    """Render again what lint checks against a rendering, in one op folder or every one under
    `path`: each side's support file, and the port's generated block with the frozen configs it
    holds: those of the performance json, their home (`FrozenStore`), where the folder has one
    (a port whose block or json cannot be read is left as it is, for lint to report). Returns
    the files that changed (written as one step)."""
    from ops import all_ops

    changed: dict[Path, str | bytes] = {}
    for folder in _op_folders(path) if path.is_dir() else []:
        op = folder.name
        if op not in all_ops():
            continue
        for side, name in ((NPU, "npu_atk_test"), (GPU, "gpu_atk_test")):
            target = folder / name / support_name(op)
            if target.parent.is_dir():
                want = render_support(op, side)
                if not target.is_file() or target.read_text(encoding="utf-8") != want:
                    changed[target] = want
        port = folder / "npu_atk_test" / f"{op}.py"
        if port.is_file():
            source = port.read_text(encoding="utf-8")
            performance = port.with_name(f"{op}_performance.json")
            try:
                frozen = (
                    FrozenStore.of(op, performance_json.read(performance)).block()
                    if performance.is_file()
                    else read_frozen(source, port)
                )
                want = replace_block(source, frozen, port)
            except UserError:
                continue  # a damaged block is lint's to report, not fix's to guess
            if want != source:
                changed[port] = want
    write_files(changed)
    return sorted(changed)
