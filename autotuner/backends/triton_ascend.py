"""What the installed triton-ascend can build, and what its compiler's output says.

Read from Ascend/triton-ascend (tag v3.2.0, branch release/3.5.x) and from bishengir-compile, its
compiler, in Ascend/AscendNPU-IR (tag v1.2.0):

- Which chips: `NPUOptions.compile_on_910_95` (ascend/backend/compiler.py) picks the 950's
  compile path. 3.2.0, the PyPI release, hard-codes it False, so by itself it builds for the
  910B and 910_93 only. Asked per launch (`compile_on_910_95=True`) with ascendnpu-ir's
  `bishengir-compile-a5` as its compiler, 3.2.0 does compile for the 950: `autotune space
  --compile` plans 950 configs so (`backends.compile`). Running them is another matter: the 3.2.0
  runtime detects no 950, and fetches and passes the FFTS address that the 3.5 line stopped using
  on the 950 (commit e4747419d, "blacklist Ascend 910_95 arch for FFTS"; its launch call itself,
  `rtKernelLaunch`, is unchanged), so a 3.2.0 launch on a 950 has not been shown to work. The 3.5
  line (branch release/3.5.x) detects a 950 on the host (PCI device 0xd806 or `npu-smi`,
  python/triton/tools/get_ascend_devices.py) and sets all of this itself; it is not on PyPI.
- Multibuffer's default: `NPUOptions.multibuffer = not is_compile_on_910_95`: on for A2/A3, off on
  the 950.
- SIMD and SIMT: `compile_mode="simd"` (the default) never passes `num_warps` to the compiler;
  `compile_mode="simt_only"` does (`--num-warps`, `ttir_to_npubin`), and then passes no
  multibuffer option: SIMT code runs on the vector cores alone (its `mix_mode` is "aiv").
- Overflows: bishengir reports "ub overflow", "cbuf overflow" (L1) and "cc overflow" (L0C),
  "requires N bits while M bits available". From v1.2.0 it retries such a compile with
  `enable-auto-multi-buffer` false and says so on stderr ("[NOTE] ... set enable-auto-multi-buffer
  to false ...", bishengir/lib/Tools/RetriablePassManager/RetriablePassManager.cpp): a config
  asked with multibuffer on then runs with it off.
- Used UB: with `ENABLE_PRINT_UB_BITS=1` triton-ascend asks the compiler to print its allocation
  ("UB size = N bits" on stdout; it keeps N as `metadata.required_ub_bits`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import metadata

from core.socs import ascend_family

#: Where a 950 compiler comes from, for the capability gate's message.
NEEDED_FOR_950 = (
    "triton-ascend's 3.5 line, which detects the 950 (Ascend/triton-ascend, branch "
    "release/3.5.x; not on PyPI)"
)


@dataclass(frozen=True)
class TritonAscend:
    """The installed triton-ascend: its version and the defaults of its `NPUOptions`."""

    version: str
    targets_950: bool
    multibuffer: bool
    has_compile_mode: bool
    #: The names of its `NPUOptions` fields: the compiler options a launch may set.
    options: frozenset[str] = frozenset()


def installed() -> TritonAscend | None:
    """The installed triton-ascend, or None (upstream Triton or no Triton)."""
    try:
        version = metadata.version("triton-ascend")
    except metadata.PackageNotFoundError:
        return None
    from triton.backends.ascend.compiler import NPUOptions

    fields = NPUOptions.__dataclass_fields__
    return TritonAscend(
        version=version,
        targets_950=bool(fields["compile_on_910_95"].default),
        multibuffer=bool(fields["multibuffer"].default),
        has_compile_mode="compile_mode" in fields,
        options=frozenset(fields),
    )


def multibuffer_default(soc: str, compiler: TritonAscend | None) -> bool:
    """What a launch that names no multibuffer gets on a soc: the installed compiler's default
    where it builds for that soc, else triton-ascend's rule (off on the 950, on elsewhere)."""
    if compiler is not None and cannot_build(soc, compiler) is None:
        return compiler.multibuffer
    return not compiles_on_910_95(soc)


def compiles_on_910_95(soc: str) -> bool:
    """Whether a soc takes the 950's compile path (`compile_on_910_95`): its family's word."""
    family = ascend_family(soc)
    return family is not None and family.compile_on_910_95


def cannot_build(soc: str, compiler: TritonAscend | None, mode: str = "simd") -> str | None:
    """Why `compiler` cannot build `mode` code for `soc`, in one line; None where it can."""
    if compiler is None:
        return "triton-ascend is not installed (pip install 'autotune[npu]')"
    wants_950 = compiles_on_910_95(soc)
    if wants_950 and not compiler.targets_950:
        return (
            f"triton-ascend {compiler.version} does not run on the {soc}: it detects no 950 "
            f"(NPUOptions.compile_on_910_95 is False) and its runtime is not known to launch on "
            f"one (it passes the FFTS address the 3.5 line dropped for the 950); compiling for "
            f"the {soc} works without the chip (`autotune space --compile`); running on it "
            f"needs {NEEDED_FOR_950}"
        )
    if compiler.targets_950 and not wants_950:
        return (
            f"triton-ascend {compiler.version} compiles for a 950 on this host, not for the {soc}"
        )
    if mode == "simt" and not compiler.has_compile_mode:
        return f"triton-ascend {compiler.version} has no compile_mode: it cannot compile SIMT code"
    return None
