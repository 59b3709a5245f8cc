"""Backends by soc: `get_backend("cpu")`, `get_backend("H200")`, `get_backend("950PR")`, or the
device found here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.errors import UserError
from core.limits import DeviceLimits
from core.socs import CPU, BackendKind, check_soc, is_npu_soc

from . import npu_options as npu_options_module
from . import triton_ascend
from .base import Backend, Timing
from .cpu import CpuBackend
from .cuda import CudaBackend
from .npu import (
    NPU_MODES,
    NpuBackend,
    check_mode,
    npu_launch_options,
    npu_limits,
    npu_option_defaults,
)

__all__ = [
    "Backend",
    "SocProfile",
    "Timing",
    "device_indices",
    "found_devices",
    "get_backend",
    "soc_profile",
]


#: The backend class of each kind.
BACKENDS: dict[BackendKind, type[Backend]] = {
    BackendKind.CPU: CpuBackend,
    BackendKind.CUDA: CudaBackend,
    BackendKind.NPU: NpuBackend,
}
#: The kinds with devices, in the order a soc left open is looked for.
DEVICE_KINDS = (BackendKind.CUDA, BackendKind.NPU)


def device_indices(backend: Backend) -> list[int]:
    """Indices, as torch numbers the visible devices, of every device of `backend`'s soc here."""
    found = BACKENDS[backend.kind].found_devices()
    return [i for i, (soc, _) in enumerate(found) if soc == backend.soc]


def found_devices() -> str:
    """One phrase naming what this machine offers, for error messages."""
    gpus = [f"{name} (soc {soc})" for soc, name in CudaBackend.found_devices()] or ["no CUDA GPU"]
    npus = [f"{name} (soc {soc})" for soc, name in NpuBackend.found_devices()]
    if not npus:
        npus = [f"no Ascend NPU ({NpuBackend.unavailable()})"]
    return ", ".join([*gpus, *npus, "cpu (Triton interpreter)"])


@dataclass(frozen=True)
class SocProfile:
    """What a search on a soc may vary and must respect, known without its device."""

    launch_options: frozenset[str]
    limits: DeviceLimits
    option_defaults: dict[str, int | str]
    #: Compiler options this soc's searches cannot vary, and why (Ascend: `npu_options`).
    left_out: dict[str, str] = field(default_factory=dict)
    #: How an Ascend soc compiles (`NPU_MODES`); "simd" elsewhere.
    mode: str = "simd"

    @classmethod
    def of(cls, backend: Backend) -> SocProfile:
        """What a search on a backend's device may vary and must respect."""
        return cls(
            backend.launch_options,
            backend.limits,
            dict(backend.option_defaults),
            mode=getattr(backend, "mode", "simd"),
        )

    @property
    def compiler_options(self) -> frozenset[str]:
        """The compiler options a search varies beyond multibuffer (`--npu-options`)."""
        return self.launch_options & frozenset(npu_options_module.OPTIONS)


def soc_profile(soc: str, npu_mode: str = "simd", npu_options: tuple[str, ...] = ()) -> SocProfile:
    """The launch options, static limits and option defaults of a known soc in a mode, with the
    compiler options a search chose (`--npu-options`, Ascend only)."""
    known = check_soc(soc)
    if known.kind == BackendKind.NPU:
        check_mode(soc, npu_mode)
        options = npu_options_module.chosen(soc, npu_options) if npu_mode == "simd" else frozenset()
        return SocProfile(
            npu_launch_options(npu_mode, options),
            npu_limits(soc, npu_mode),
            npu_option_defaults(soc, npu_mode),
            npu_options_module.left_out(soc, triton_ascend.installed()),
            npu_mode,
        )
    if npu_options:
        raise UserError(f"--npu-options is for an Ascend soc, not {soc!r}")
    if npu_mode != "simd":
        raise UserError(f"--npu-mode {npu_mode} is for an Ascend soc, not {soc!r}")
    limits = DeviceLimits(shared_memory_bytes=known.shared_memory_bytes)
    return SocProfile(BACKENDS[known.kind].launch_options, limits, {})


def _compiled() -> None:
    """Kernels of a device backend run compiled, not in the interpreter."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        os.environ["TRITON_INTERPRET"] = "0"


def get_backend(
    soc: str | None = None, npu_mode: str = "simd", npu_options: tuple[str, ...] = ()
) -> Backend:
    """The backend for `soc`; None picks the first accelerator found, else the interpreter.
    `npu_mode` (simd or simt) is how an Ascend NPU compiles, `npu_options` the compiler options
    its searches vary; other socs take only "simd" and no options."""
    if npu_options and not is_npu_soc(soc or ""):
        raise UserError(f"--npu-options is for an Ascend soc, not {soc!r}")
    if npu_mode not in NPU_MODES:
        raise UserError(f"unknown --npu-mode {npu_mode!r}; use one of {', '.join(NPU_MODES)}")
    if npu_mode != "simd" and soc is None:
        raise UserError(f"--npu-mode {npu_mode} needs --soc naming an Ascend soc")
    if npu_mode != "simd" and not is_npu_soc(soc or ""):
        raise UserError(f"--npu-mode {npu_mode} is for an Ascend soc, not {soc!r}")
    if soc == CPU:
        return CpuBackend()
    for kind in DEVICE_KINDS:
        found = [s for s, _ in BACKENDS[kind].found_devices()]
        soc = soc or (found[0] if found else None)
        if soc in found:
            _compiled()
            return BACKENDS[kind].open(found.index(soc), npu_mode, npu_options)
    if soc is None:
        return CpuBackend()
    if check_soc(soc).kind == BackendKind.NPU:
        raise UserError(f"soc {soc!r} needs an Ascend NPU; this machine has: {found_devices()}")
    raise UserError(f"soc {soc!r} is not on this machine; found: {found_devices()}")
