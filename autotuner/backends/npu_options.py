"""Which of triton-ascend's compiler options (`ops.npu_tunables`) a soc's search may vary, what a
launch that leaves one out gets there, and why any is left out.

Defaults are bishengir-compile's own for a flag left out (AscendNPU-IR
bishengir/include/bishengir/Tools/bishengir-compile/Options.td: v1.2.0, the binary ascendnpu-ir
1.2.0 ships for the 910B and 910_93; f9d978b, the one it ships for the 950 as
`bishengir-compile-a5`), except where triton-ascend always passes the option: `multibuffer`
(`triton_ascend.multibuffer_default`) and `enable_auto_bind_sub_block`, which `NPUOptions` sets to
`not is_compile_on_910_95` (v3.2.0 ascend/backend/compiler.py), off for the 950.

Left out of a 950 space: options bishengir-compile-a5 accepts but no pass of it reads (so every
value compiles alike), and an option the 950 path of triton-ascend 3.2.0 does not pass on
(`linalg_to_bin_enable_npu_compile_910_95` has no `--enable-hivm-graph-sync-solver`); anywhere,
an option the installed triton-ascend's `NPUOptions` lacks.
"""

from __future__ import annotations

from core.errors import UserError
from ops.npu_tunables import (
    AUTO_BIND_SUB_BLOCK,
    CV_BALANCE,
    LOCAL_BUFFER_LIMIT,
    MIXED_CV_OPTIONS,
    MULTIBUFFER,
    SYNC_SOLVER,
    TILE_MIX_CUBE_LOOP,
    TILE_MIX_VECTOR_LOOP,
    WORKSPACE_MULTIBUFFER,
)

from . import triton_ascend

#: The options a study may add to the tiles and `multibuffer` (`--npu-options`).
OPTIONS = {t.name: t for t in MIXED_CV_OPTIONS}
#: Where the 950's compiler differs from the A2/A3 one when a flag is left out (Options.td at
#: f9d978b: tile-mix loops 1, workspace multibuffer 2, CV balance on, no local-buffer limit).
_950_DEFAULTS = {
    LOCAL_BUFFER_LIMIT.name: "no-limit",
    WORKSPACE_MULTIBUFFER.name: 2,
    CV_BALANCE.name: True,
    TILE_MIX_VECTOR_LOOP.name: 1,
    TILE_MIX_CUBE_LOOP.name: 1,
    AUTO_BIND_SUB_BLOCK.name: False,
}
_NO_READER = (
    "bishengir-compile-a5 (ascendnpu-ir 1.2.0) takes it but none of its passes reads it "
    "(AscendNPU-IR f9d978b, bishengir-compile/Options.td: optionScope A3_ONLY)"
)
#: Options a 950 space leaves out, and why.
_950_LEFT_OUT = {
    TILE_MIX_VECTOR_LOOP.name: _NO_READER
    + "; the 3.5 line no longer passes it on the 950 (Ascend/triton-ascend 5718a8c3c)",
    TILE_MIX_CUBE_LOOP.name: _NO_READER
    + "; the 3.5 line no longer passes it on the 950 (Ascend/triton-ascend 5718a8c3c)",
    CV_BALANCE.name: (
        "bishengir-compile-a5 (ascendnpu-ir 1.2.0) takes it but only copies it into options no "
        "pass reads (AscendNPU-IR f9d978b, bishengir/lib/Tools/bishengir-compile/PassPipeline.cpp)"
    ),
    SYNC_SOLVER.name: (
        "triton-ascend 3.2.0's 950 compile path does not pass it on "
        "(linalg_to_bin_enable_npu_compile_910_95, ascend/backend/compiler.py)"
    ),
}


def option_defaults(soc: str) -> dict[str, int | str]:
    """What a launch on `soc` that names none of the options gets, each option by name."""
    defaults: dict[str, int | str] = {t.name: t.default for t in MIXED_CV_OPTIONS}
    if soc in triton_ascend.FAMILY_950:
        defaults.update(_950_DEFAULTS)
    defaults[MULTIBUFFER.name] = triton_ascend.multibuffer_default(soc, triton_ascend.installed())
    return defaults


def left_out(soc: str, compiler: triton_ascend.TritonAscend | None) -> dict[str, str]:
    """Option -> why a search on `soc` cannot vary it, with `compiler` installed (None: not
    installed here; the facts above are 3.2.0's)."""
    out = dict(_950_LEFT_OUT) if soc in triton_ascend.FAMILY_950 else {}
    if compiler is not None:
        for name in OPTIONS:
            if name not in compiler.options and name not in out:
                out[name] = f"triton-ascend {compiler.version} has no NPUOptions.{name}"
    return out


def chosen(soc: str, names: tuple[str, ...]) -> frozenset[str]:
    """The options `--npu-options` names for a search on `soc` ("all": every one the soc has);
    UserError naming the valid ones, or why one is left out on this soc."""
    dropped = left_out(soc, triton_ascend.installed())
    if names == ("all",):
        return frozenset(name for name in OPTIONS if name not in dropped)
    for name in names:
        if name not in OPTIONS:
            raise UserError(
                f"unknown --npu-options value {name!r}; use all or any of {', '.join(OPTIONS)}"
            )
        if name in dropped:
            raise UserError(
                f"--npu-options {name} cannot be searched on the {soc}: {dropped[name]}"
            )
    return frozenset(names)
