"""The compiler options triton-ascend lets a launch set, as tunables of the NPU backend:
`multibuffer`, SIMT code and its warps, and the mixed cube/vector options.

A kernel opts in by listing them among its tunables; they are launch options (never kernel
arguments), so a CUDA or interpreter space leaves them out. Which apply: a vector-only kernel
takes `multibuffer` alone (`MULTIBUFFER`); a kernel with `tl.dot` compiles to mixed
cube/vector code (its `mix_mode` is "mix", as bishengir's input says for every such kernel here)
and takes `MIXED_CV_OPTIONS` too. That split, the values and the defaults are triton-ascend's:

- The options: `NPUOptions` (Ascend/triton-ascend v3.2.0, python/triton/backends/ascend/
  compiler.py), passed to bishengir-compile as flags by `linalg_to_bin_enable_npu_compile_A2_A3`
  (`--enable-hivm-unit-flag-sync`, `--limit-auto-multi-buffer-of-local-buffer`,
  `--limit-auto-multi-buffer-only-for-local-buffer`, `--set-workspace-multibuffer`,
  `--enable-hivm-auto-cv-balance`, `--tile-mix-vector-loop`, `--tile-mix-cube-loop`,
  `--enable-auto-bind-sub-block`, `--enable-hivm-graph-sync-solver`).
- Which kernels and which values: the tuner of the 3.5 line sweeps `_CUBE_PARAMS` / `_MIXCV_PARAMS`
  with `_VALID_VALUES` (python/triton/runtime/autotuner.py at main eeb030e7, lines 491-521:
  tile_mix loops in {2, 4, 8}, workspace multibuffer in {2, 4}, the local-buffer limit
  "no-limit" or "no-l0c"), as docs/en/migration_guide/architecture_difference.md lists them
  (lines 146-156); `enable_auto_bind_sub_block` and `sync_solver` are "CV-fused only"
  (docs/en/architecture_design_and_core_features.md, lines 78-96).
- Defaults: what bishengir-compile does with the flag left out (AscendNPU-IR v1.2.0,
  bishengir/include/bishengir/Tools/bishengir-compile/Options.td, for the 910B and 910_93; the
  a5 build f9d978b of the same file for the 950), given per soc by
  `autotuner.backends.npu_options`. `Tunable.default` here is the A2/A3 one.

The 950's options differ: several are accepted there but read by no pass, or not passed at all by
3.2.0's 950 path; `autotuner.backends.npu_options` leaves those out of a 950 space and says why.
"""

from __future__ import annotations

from .tunable import Role, Tunable

#: triton-ascend's `multibuffer` launch option: double-buffer the tiles a loop moves by DMA
#: (`--enable-auto-multi-buffer` of its compiler). Off and on, as booleans: the value
#: triton-ascend declares, kept as is in JSON and in the generated blocks. A launch that leaves it
#: out gets the compiler's default, `NPUOptions.multibuffer = not is_compile_on_910_95`
#: (Ascend/triton-ascend, ascend/backend/compiler.py at v3.2.0): on for the 910B and 910_93, off
#: on the 950. `default` here is the A2/A3 one; an NPU backend sets its soc's
#: (`Backend.option_defaults`).
MULTIBUFFER = Tunable(
    "multibuffer",
    (False, True),
    role=Role.LAUNCH_OPTION,
    default=True,
    source="NPUOptions.multibuffer, Ascend/triton-ascend v3.2.0 ascend/backend/compiler.py",
)
#: Ascend SIMT mode (`--npu-mode simt`): the warp counts triton-ascend's own tuner tries there
#: (`_expand_simt_num_warps_configs`, third_party/ascend/backend/runtime/autotuner.py on main), and
#: its `NPUOptions.num_warps` default, 32, for a default config whose warp count is not one of them.
SIMT_WARPS = Tunable(
    "num_warps",
    (8, 16, 32, 64),
    role=Role.LAUNCH_OPTION,
    default=32,
    source="_expand_simt_num_warps_configs, Ascend/triton-ascend main "
    "third_party/ascend/backend/runtime/autotuner.py",
)
#: The option that makes triton-ascend compile a kernel as SIMT code, passing `num_warps` to
#: bishengir-compile (`compile_mode="simt_only"`; SIMD, the default, never reads num_warps).
SIMT_ONLY = Tunable(
    "compile_mode",
    ("simt_only",),
    role=Role.LAUNCH_OPTION,
    default="simt_only",
    source="NPUOptions.compile_mode, Ascend/triton-ascend v3.2.0 ascend/backend/compiler.py",
)

_OPTIONS = "NPUOptions.{}, Ascend/triton-ascend v3.2.0 ascend/backend/compiler.py; "
_SWEPT = "swept by the 3.5 line's tuner (main eeb030e7 python/triton/runtime/autotuner.py:491-521)"
_CV_ONLY = "CV-fused only (main eeb030e7 docs/en/architecture_design_and_core_features.md:78-96)"


def _option(name: str, values: tuple, default, note: str = _SWEPT, **kw) -> Tunable:
    return Tunable(
        name,
        values,
        role=Role.LAUNCH_OPTION,
        default=default,
        source=_OPTIONS.format(name) + note,
        **kw,
    )


#: Sync the cube's output by unit flags (`--enable-hivm-unit-flag-sync`); off by default.
UNIT_FLAG = _option("unit_flag", (False, True), False)
#: Which local buffers multibuffer may double: all, or all but L0C (a3 default "no-l0c").
LOCAL_BUFFER_LIMIT = _option(
    "limit_auto_multi_buffer_of_local_buffer", ("no-limit", "no-l0c"), "no-l0c"
)
#: Multibuffer only local buffers, not the cube/vector workspace in global memory.
ONLY_LOCAL_BUFFER = _option("limit_auto_multi_buffer_only_for_local_buffer", (False, True), False)
#: Copies of the cube/vector workspace (a3 default 4). Read only where `ONLY_LOCAL_BUFFER` is off:
#: "takes effect only when limit_auto_multi_buffer_only_for_local_buffer=false"
#: (architecture_difference.md), and the 3.5 line's tuner does not sweep it otherwise
#: (runtime/autotuner.py at main eeb030e7, lines 643-652).
WORKSPACE_MULTIBUFFER = _option(
    "set_workspace_multibuffer", (2, 4), 4, read_only_when=(ONLY_LOCAL_BUFFER.name, False)
)
#: Balance the cube and vector pipelines (`--enable-hivm-auto-cv-balance`; a3 default off).
CV_BALANCE = _option("enable_hivm_auto_cv_balance", (False, True), False)
#: Pieces the vector and cube loops of a mixed kernel are cut into (a3 default 2).
TILE_MIX_VECTOR_LOOP = _option("tile_mix_vector_loop", (2, 4, 8), 2)
TILE_MIX_CUBE_LOOP = _option("tile_mix_cube_loop", (2, 4, 8), 2)
#: Split a vector part across the two vector cores of an AI core (a3 default on).
AUTO_BIND_SUB_BLOCK = _option("enable_auto_bind_sub_block", (False, True), True, _CV_ONLY)
#: Synchronize by bishengir's graph sync solver instead of inject-sync (default on).
SYNC_SOLVER = _option("sync_solver", (False, True), True, _CV_ONLY)

#: The options of a kernel with `tl.dot` (mixed cube/vector code), besides multibuffer.
MIXED_CV_OPTIONS = (
    UNIT_FLAG,
    LOCAL_BUFFER_LIMIT,
    ONLY_LOCAL_BUFFER,
    WORKSPACE_MULTIBUFFER,
    CV_BALANCE,
    TILE_MIX_VECTOR_LOOP,
    TILE_MIX_CUBE_LOOP,
    AUTO_BIND_SUB_BLOCK,
    SYNC_SOLVER,
)
