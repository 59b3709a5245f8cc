"""The socs a number can belong to: one registry entry per chip, with everything known of it.

A soc is a `Soc` in `SOCS`: the device names it answers to, the kind of backend that runs it and,
for an Ascend soc, its chip family (compiler, compile path, on-chip memory, option defaults), the
compiler target that stands for it without a device and its core counts. Adding a soc is adding
one entry; every backend, the compile path and storage read the registry.

The port files carry a generated copy of `soc_patterns()` and `soc_from_device_name` (they must
run without this package); a test keeps the two in step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum

from .errors import UserError

KIB = 1024


class BackendKind(StrEnum):
    """What runs a soc's kernels: the Triton interpreter, an NVIDIA GPU, or an Ascend NPU."""

    CPU = "cpu"
    CUDA = "cuda"
    NPU = "npu"


@dataclass(frozen=True)
class AscendFamily:
    """What the Ascend socs of one compile path share: compiler, on-chip memory, option defaults.

    On-chip memory (Ascend/AscendNPU-IR,
    bishengir/include/bishengir/Dialect/HACC/Targets/NPUTargetSpec.td): the unified buffer (UB)
    holds a program's vector tiles, L1 the operands of `tl.dot`, L0C its results.
    """

    name: str
    #: The bishengir binary: ascendnpu-ir ships the A2/A3 pipeline as `bishengir-compile` and the
    #: 950's (regbase) as `bishengir-compile-a5`.
    compiler: str
    #: Takes triton-ascend's 950 compile path (`NPUOptions.compile_on_910_95`,
    #: `linalg_to_bin_enable_npu_compile_910_95`; Ascend/triton-ascend v3.2.0
    #: python/triton/backends/ascend/compiler.py).
    compile_on_910_95: bool
    #: UB bytes of one AI core in SIMD mode.
    unified_buffer_bytes: int
    l1_bytes: int
    l0c_bytes: int
    #: UB bytes left to SIMT code beside the data cache; None where the vector cores run no SIMT.
    simt_unified_buffer_bytes: int | None = None
    #: The vector register file, where the compiler keeps fused intermediates that would
    #: otherwise take UB.
    register_file_bytes: int | None = None
    #: A tl.dot operand made by vector code with rows of this many bytes aborts the compiler.
    crashing_dot_row_bytes: int | None = None
    #: Compiler options (`ops.npu_tunables`, by name) whose default on this family differs from
    #: the option's own, with the value a launch that leaves them out gets.
    option_defaults: dict[str, int | str | bool] = field(default_factory=dict)
    #: Compiler options a search on this family cannot vary, and why.
    left_out: dict[str, str] = field(default_factory=dict)


#: 910B (Atlas A2) and 910_93 (A3): UB 192 KiB, L1 512 KiB, L0C 128 KiB (NPUTargetSpec.td).
A2_A3 = AscendFamily(
    name="A2/A3",
    compiler="bishengir-compile",
    compile_on_910_95=False,
    unified_buffer_bytes=192 * KIB,
    l1_bytes=512 * KIB,
    l0c_bytes=128 * KIB,
)

_NO_READER = (
    "bishengir-compile-a5 (ascendnpu-ir 1.2.0) takes it but none of its passes reads it "
    "(AscendNPU-IR f9d978b, bishengir-compile/Options.td: optionScope A3_ONLY)"
)
#: The 950 family (950PR, 950DT).
#:
#: - Memory (NPUTargetSpec.td): UB 248 KiB (256 less 8 the compiler keeps), L1 512 KiB, L0C
#:   256 KiB. Code with SIMT parts keeps at least 32 KiB of the UB as data cache
#:   (MinimalDCacheSize), leaving 216 KiB, the most shared memory bishengir-compile accepts for
#:   SIMT code (`shared-mem-dynamic-size` up to 221184,
#:   bishengir/lib/Tools/bishengir-compile/regbase/PassPipeline.cpp).
#: - The vector register file of its AI cores, where its compiler (the "regbase" pipeline,
#:   ascendnpu-ir's bishengir-compile-a5) keeps fused intermediates that the A2/A3 one puts in the
#:   UB: 128 KiB (Ascend/triton-ascend main eeb030e7, python/triton/runtime/utils.py:48-50). On
#:   the compile matrix it plans vector kernels in up to 30% less UB than their tiles.
#: - bishengir-compile-a5 (ascendnpu-ir 1.2.0) aborts on a tl.dot operand made by vector code
#:   whose rows are 32 bytes (16 bf16 or fp16 elements): its ND-to-NZ conversion emits an identity
#:   vtranspose on memrefs, which a canonicalization replaces with a value (AscendNPU-IR f9d978b,
#:   bishengir/lib/Dialect/HIVM/IR/HIVMCanonicalizations.cpp:345-383; the same code on master).
#:   The 910B compiler rejects that transpose in its verifier and plans those configs.
#: - Option defaults where the 950's compiler differs from the A2/A3 one when a flag is left out
#:   (AscendNPU-IR bishengir/include/bishengir/Tools/bishengir-compile/Options.td at f9d978b:
#:   tile-mix loops 1, workspace multibuffer 2, CV balance on, no local-buffer limit), and
#:   `enable_auto_bind_sub_block`, which triton-ascend's `NPUOptions` sets to
#:   `not is_compile_on_910_95` (v3.2.0 ascend/backend/compiler.py).
#: - Left out of its spaces: options bishengir-compile-a5 accepts but no pass of it reads (so
#:   every value compiles alike), and one the 950 path of triton-ascend 3.2.0 does not pass on.
FAMILY_950 = AscendFamily(
    name="950",
    compiler="bishengir-compile-a5",
    compile_on_910_95=True,
    unified_buffer_bytes=248 * KIB,
    l1_bytes=512 * KIB,
    l0c_bytes=256 * KIB,
    simt_unified_buffer_bytes=216 * KIB,
    register_file_bytes=128 * KIB,
    crashing_dot_row_bytes=32,
    option_defaults={
        "limit_auto_multi_buffer_of_local_buffer": "no-limit",
        "set_workspace_multibuffer": 2,
        "enable_hivm_auto_cv_balance": True,
        "tile_mix_vector_loop": 1,
        "tile_mix_cube_loop": 1,
        "enable_auto_bind_sub_block": False,
    },
    left_out={
        "tile_mix_vector_loop": _NO_READER
        + "; the 3.5 line no longer passes it on the 950 (Ascend/triton-ascend 5718a8c3c)",
        "tile_mix_cube_loop": _NO_READER
        + "; the 3.5 line no longer passes it on the 950 (Ascend/triton-ascend 5718a8c3c)",
        "enable_hivm_auto_cv_balance": (
            "bishengir-compile-a5 (ascendnpu-ir 1.2.0) takes it but only copies it into options "
            "no pass reads (AscendNPU-IR f9d978b, bishengir/lib/Tools/bishengir-compile/"
            "PassPipeline.cpp)"
        ),
        "sync_solver": (
            "triton-ascend 3.2.0's 950 compile path does not pass it on "
            "(linalg_to_bin_enable_npu_compile_910_95, ascend/backend/compiler.py)"
        ),
    },
)


@dataclass(frozen=True)
class Soc:
    """One chip a number can belong to, and what is known of it without its device."""

    name: str
    kind: BackendKind
    #: Regexes over a device name that mean this soc (`soc_from_device_name`).
    patterns: tuple[str, ...] = ()
    #: Ascend: the chip family.
    family: AscendFamily | None = None
    #: Ascend: the compiler target that stands for this soc without its device: a target both
    #: binaries of ascendnpu-ir 1.2.0 list (`--target=`), with the soc's on-chip sizes.
    compile_target: str | None = None
    #: Ascend: AI (cube) cores and vector cores of `compile_target`, for a program count planned
    #: without a device (a device reports its own). CUDA: none, the device reports its SMs.
    cores: int | None = None
    vector_cores: int | None = None
    #: CUDA: shared memory one block may opt in to, for a space described without the GPU.
    shared_memory_bytes: int | None = None


def _ascend(
    name: str, patterns: tuple[str, ...], family: AscendFamily, target: str, cores: int, vector: int
) -> Soc:
    return Soc(name, BackendKind.NPU, patterns, family, target, cores, vector)


def _gpu(name: str, shared_kib: int) -> Soc:
    return Soc(name, BackendKind.CUDA, (rf"\b{name}\b",), shared_memory_bytes=shared_kib * KIB)


CPU = "cpu"
#: Every known soc, in the order messages list them.
#:
#: Ascend device names: the 950 family's older names, `Ascend910_95xx`, carry the chip ids of its
#: newer ones: 9581 is a 950DT's (`Ascend950DT_9581`), the others in use a 950PR's
#: (NPUTargetSpec.td lists both namings). Core counts (AI cores, vector cores) are
#: AI_CORE_COUNT and VECTOR_CORE_COUNT of the compile target as ascendnpu-ir 1.2.0 states them
#: (`bishengir-opt --hacc-append-device-spec=target=...`, the a5 binary for the 950s;
#: NPUTargetSpec.td). Other SKUs differ (Ascend910B3/B4 and Ascend910_9372: 20 and 40;
#: Ascend950PR_9589: 32 and 64; Ascend950DT_95A1: 36 and 72). triton-ascend likewise counts two
#: vector cores per AI core (NPUUtils.get_device_properties, Ascend/triton-ascend v3.2.0
#: python/triton/backends/ascend/driver.py:84-86) and bounds a vector-only kernel's grid by the
#: vector cores, a kernel with tl.dot by the AI cores (driver.py:504-505).
#:
#: GPUs' shared memory per block (opt-in): the CUDA C++ Programming Guide's "Technical
#: Specifications per Compute Capability" (7.0: 96 KB, 7.5: 64 KB, 8.0: 163 KB, 8.6 and 8.9:
#: 99 KB, 9.0 and 10.0: 227 KB).
SOCS: dict[str, Soc] = {
    soc.name: soc
    for soc in (
        Soc(CPU, BackendKind.CPU),
        _ascend("950PR", (r"^Ascend950PR", r"^Ascend910_95"), FAMILY_950, "Ascend950PR_9599", 36, 72),
        _ascend("950DT", (r"^Ascend950DT", r"^Ascend910_9581"), FAMILY_950, "Ascend950DT_9581", 32, 64),
        _ascend("910B", (r"^Ascend910B",), A2_A3, "Ascend910B2", 24, 48),
        _ascend("910_93", (r"^Ascend910_93",), A2_A3, "Ascend910_9391", 24, 48),
        _gpu("GH200", 227),
        _gpu("H200", 227),
        _gpu("H100", 227),
        _gpu("H800", 227),
        _gpu("H20", 227),
        _gpu("B200", 227),
        _gpu("B100", 227),
        _gpu("A100", 163),
        _gpu("A800", 163),
        _gpu("A10", 99),
        _gpu("L40S", 99),
        _gpu("L40", 99),
        _gpu("L4", 99),
        _gpu("V100", 96),
        _gpu("T4", 64),
    )
}  # fmt: skip
VENDOR_WORDS = ("NVIDIA", "GeForce", "Tesla", "Quadro")


def known_socs() -> tuple[str, ...]:
    return tuple(SOCS)


def socs_of(kind: BackendKind) -> tuple[str, ...]:
    """The known socs a kind of backend runs, in registry order."""
    return tuple(name for name, soc in SOCS.items() if soc.kind == kind)


def check_soc(name: str) -> Soc:
    """The registry's entry of a soc; a UserError naming the known ones where there is none."""
    soc = SOCS.get(name)
    if soc is None:
        raise UserError(f"unknown soc {name!r}; known socs: {', '.join(SOCS)}")
    return soc


def ascend_family(name: str) -> AscendFamily | None:
    """The chip family of a known Ascend soc; None for any other soc."""
    soc = SOCS.get(name)
    return soc.family if soc is not None else None


def is_npu_soc(name: str) -> bool:
    """An Ascend soc: a known one, or an unknown Ascend device name kept verbatim."""
    soc = SOCS.get(name)
    return soc.kind == BackendKind.NPU if soc is not None else name.startswith("Ascend")


def soc_patterns() -> tuple[tuple[str, str], ...]:
    """(regex over the device name, soc), the first match winning: registry order, except that a
    pattern another one extends (`^Ascend910_95` of `^Ascend910_9581`) waits until after it."""
    pending = [(pattern, soc.name) for soc in SOCS.values() for pattern in soc.patterns]
    ordered = []
    while pending:
        extended = {p for p, _ in pending for q, _ in pending if q != p and q.startswith(p)}
        first = next(i for i, (p, _) in enumerate(pending) if p not in extended)
        ordered.append(pending.pop(first))
    return tuple(ordered)


def soc_from_device_name(name: str) -> str:
    """`Ascend950PR_9599` -> `950PR`, `NVIDIA A100-SXM4-80GB` -> `A100`.

    An unknown name becomes its words without vendor names, joined (`NVIDIA RTX 6000` -> `RTX6000`).
    """
    for pattern, soc in soc_patterns():
        if re.search(pattern, name):
            return soc
    words = [w for w in name.split() if w not in VENDOR_WORDS]
    return "".join(words) or name
