"""The generated block of a port file: frozen configs, the code that picks one at run time, and the
launcher helpers ports share.

Only the text between the two marker lines is ever rewritten; everything else in the kernel file
is the port author's. Each ATK folder must run alone, so a helper several ports call cannot live
in a module they import: its one source is the template, rendered into the block of every port
that calls it. Every block has the config pick (`_pick_config`, `_split_config`, `_configure`)
and the input checks (`_checked`, `_check_offsets`); of the helpers only some ports call, a block
holds those its port's own code calls, and those they call (`port_helpers`): a new port names no
helpers anywhere else. `autotune lint` fails on a block that differs from its rendering.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path
from typing import Any

import jinja2

from core.errors import UserError
from core.socs import VENDOR_WORDS, BackendKind, soc_patterns
from ops import all_ops
from ops.spec import KernelSpec
from ops.tunable import Role

from ..backends import npu_options
from ..backends.cuda import CudaBackend
from ..backends.npu import npu_launch_options
from .pyliteral import format_literal

BEGIN_MARKER = (
    "# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>"
)
END_MARKER = "# <<< autotune generated block <<<"
#: Launch options each device type understands, as the backends name them. On an NPU, num_warps goes only with compile_mode="simt_only" (SIMT code,
#: `--npu-mode simt`): triton-ascend's SIMD code never reads it (autotuner.backends.npu); the
#: compiler options are those a search may vary (`autotuner.backends.npu_options`).
LAUNCH_OPTIONS = {
    BackendKind.CUDA.value: tuple(sorted(CudaBackend.launch_options)),
    BackendKind.NPU.value: (
        *sorted(npu_launch_options("simd") | npu_launch_options("simt")),
        *npu_options.OPTIONS,
    ),
}

#: The helpers of the template that only some ports call, in the order the template has them.
OPTIONAL_HELPERS = (
    "_programs_config",
    "_cores",
    "_grid",
    "_precision",
    "_block_d",
    "_block_size",
    "_block_m",
    "_dense_bmm_default",
    "_jagged_bmm_default",
)

FrozenConfigs = dict[str, dict[str, list[dict[str, Any]]]]
#: The warning a launcher gives, once per kernel and soc, when it takes the nearest frozen case:
#: each block defines the class (a port runs alone), so it is known by its name.
NEAREST_WARNING = "NearestFrozenCase"


def nearest_warning(message: Warning | str) -> tuple[str, str] | None:
    """(kernel, soc) a launcher's `NearestFrozenCase` warning records; None for any other."""
    if type(message).__name__ != NEAREST_WARNING:
        return None
    return message.kernel, message.soc  # type: ignore[union-attr]


@cache
def template(name: str) -> jinja2.Template:
    """A template of `autotuner/templates` (the port block, the folders' support files)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("autotuner", "templates"),
        keep_trailing_newline=True,
        autoescape=False,
        undefined=jinja2.StrictUndefined,
    )
    return env.get_template(name)


def _port_kernels(op: str) -> tuple[KernelSpec, ...]:
    """The kernels of the op a port file is named for (none for a file that is no op's port)."""
    spec = all_ops().get(op)
    return spec.kernels if spec else ()


def tile_keys(op: str) -> dict[str, dict[str, str]]:
    """kernel -> block -> the shape key of the dimension it tiles, for the port of `op`."""
    return {k.name: k.tile_keys for k in _port_kernels(op) if k.tile_keys}


def constexprs(op: str) -> tuple[str, ...]:
    """The config keys the launchers of the port of `op` pass its kernels as they are: the
    tunables whose role is a kernel constexpr."""
    return tuple(
        sorted({t.name for k in _port_kernels(op) for t in k.tunables if t.role is Role.CONSTEXPR})
    )


def whole_keys(op: str) -> dict[str, tuple[str, ...]]:
    """kernel -> the shape keys of the dimensions a program holds whole, for the port of `op`."""
    return {k.name: k.whole_keys for k in _port_kernels(op) if k.whole_keys}


def render_block(
    frozen: FrozenConfigs,
    helpers: tuple[str, ...] = (),
    tiles: dict[str, dict[str, str]] | None = None,
    wholes: dict[str, tuple[str, ...]] | None = None,
    names: tuple[str, ...] = (),
) -> str:
    """The block's text, markers included, for the given frozen configs (sorted for stable output),
    optional helpers (OPTIONAL_HELPERS), the blocks' dimensions (`tile_keys`) and the dimensions
    held whole (`whole_keys`) and the keys passed as constexprs (`constexprs`)."""
    unknown = sorted(set(helpers) - set(OPTIONAL_HELPERS))
    if unknown:
        raise ValueError(f"no such port helper in the template: {', '.join(unknown)}")
    ordered = {
        soc: {kernel: frozen[soc][kernel] for kernel in sorted(frozen[soc])}
        for soc in sorted(frozen)
    }
    return template("generated_block.py.j2").render(
        begin_marker=BEGIN_MARKER,
        end_marker=END_MARKER,
        frozen=format_literal(ordered, prefix=len("FROZEN_CONFIGS = ")),
        soc_patterns=format_literal(soc_patterns(), prefix=len("_SOC_PATTERNS = ")),
        vendor_words=format_literal(VENDOR_WORDS),
        launch_options=format_literal(LAUNCH_OPTIONS, prefix=len("_LAUNCH_OPTIONS = ")),
        tile_keys=format_literal(tiles or {}, prefix=len("_TILE_KEYS = ")),
        whole_keys=format_literal(wholes or {}, prefix=len("_WHOLE_KEYS = ")),
        constexprs=format_literal(names, prefix=len("_CONSTEXPRS = ")),
        helpers=helpers,
    )


@cache
def _helper_calls() -> dict[str, frozenset[str]]:
    """Optional helper -> the other optional helpers its text in the template calls."""
    tree = ast.parse(render_block({}, OPTIONAL_HELPERS))
    return {
        node.name: frozenset(
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name) and n.id in OPTIONAL_HELPERS and n.id != node.name
        )
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name in OPTIONAL_HELPERS
    }


def port_helpers(source: str, path: Path) -> tuple[str, ...]:
    """The optional helpers the block of a port file must hold, in the template's order: those
    the file's code outside the block calls, and those they call in turn."""
    start, stop = _block_span(source, path)
    try:
        outside = ast.parse(source[:start] + source[stop:])
    except SyntaxError as exc:
        raise UserError(
            f"{path}: not valid Python outside the generated block ({exc.msg}, line {exc.lineno})"
        ) from None
    wanted = {
        n.id for n in ast.walk(outside) if isinstance(n, ast.Name) and n.id in OPTIONAL_HELPERS
    }
    todo = list(wanted)
    while todo:
        for called in _helper_calls()[todo.pop()] - wanted:
            wanted.add(called)
            todo.append(called)
    return tuple(h for h in OPTIONAL_HELPERS if h in wanted)


def _block_span(source: str, path: Path) -> tuple[int, int]:
    """Character span of the block, markers included; UserError if the markers are damaged."""
    lines = source.splitlines(keepends=True)
    begins = [i for i, line in enumerate(lines) if line.rstrip("\n") == BEGIN_MARKER]
    ends = [i for i, line in enumerate(lines) if line.rstrip("\n") == END_MARKER]
    if len(begins) != 1 or len(ends) != 1 or ends[0] < begins[0]:
        raise UserError(
            f"{path}: the generated block's markers are missing or damaged "
            f"({len(begins)} begin and {len(ends)} end marker lines); restore them before freezing"
        )
    start = sum(len(line) for line in lines[: begins[0]])
    stop = sum(len(line) for line in lines[: ends[0] + 1])
    return start, stop


def read_frozen(source: str, path: Path) -> FrozenConfigs:
    """FROZEN_CONFIGS as currently written in the file's block."""
    start, stop = _block_span(source, path)
    try:
        tree = ast.parse(source[start:stop])
    except SyntaxError as exc:
        raise UserError(
            f"{path}: the generated block is not valid Python ({exc.msg}, block line {exc.lineno})"
        ) from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "FROZEN_CONFIGS" for t in node.targets
        ):
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                break
    raise UserError(f"{path}: the generated block has no literal FROZEN_CONFIGS")


def replace_block(source: str, frozen: FrozenConfigs, path: Path) -> str:
    """The file's source with its block regenerated (with the helpers the port calls,
    `port_helpers`); the result is checked to be valid Python."""
    start, stop = _block_span(source, path)
    block = render_block(
        frozen,
        port_helpers(source, path),
        tile_keys(path.stem),
        whole_keys(path.stem),
        constexprs(path.stem),
    )
    new = source[:start] + block + source[stop:]
    try:
        ast.parse(new)
    except SyntaxError as exc:
        raise UserError(
            f"{path}: not valid Python after regenerating the block ({exc.msg}, line {exc.lineno})"
        ) from None
    return new
