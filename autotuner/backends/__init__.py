"""Backends by soc: `get_backend("cpu")`, `get_backend("H200")`, `get_backend("950PR")`, or the
device found here."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.errors import UserError
from core.limits import DeviceLimits

from . import npu_options as npu_options_module
from . import triton_ascend
from .base import Backend, Timing
from .cpu import CpuBackend
from .cuda import SHARED_MEMORY_PER_BLOCK_OPTIN, CudaBackend
from .npu import (
    NPU_MODES,
    NpuBackend,
    check_mode,
    npu_launch_options,
    npu_limits,
    npu_option_defaults,
    npu_soc,
)
from .socs import CPU, KNOWN_SOCS, NPU_SOCS, is_npu_soc, soc_from_device_name

__all__ = [
    "Backend",
    "SocProfile",
    "Timing",
    "device_indices",
    "found_devices",
    "get_backend",
    "soc_profile",
]


def _cuda_socs() -> list[tuple[str, str]]:
    """(soc, device name) of each CUDA device torch can see."""
    if not CudaBackend.available():
        return []
    return [(soc_from_device_name(name), name) for name in CudaBackend.device_names()]


def _npu_socs() -> list[tuple[str, str]]:
    """(soc, device name) of each Ascend NPU torch_npu can see (imports torch_npu if installed)."""
    if not NpuBackend.available():
        return []
    return [(npu_soc(name), name) for name in NpuBackend.device_names()]


def device_indices(backend: Backend) -> list[int]:
    """Indices, as torch numbers the visible devices, of every device of `backend`'s soc here."""
    found = {"cuda": _cuda_socs, "npu": _npu_socs}.get(backend.kind)
    return [i for i, (soc, _) in enumerate(found()) if soc == backend.soc] if found else []


def found_devices() -> str:
    """One phrase naming what this machine offers, for error messages."""
    gpus = [f"{name} (soc {soc})" for soc, name in _cuda_socs()] or ["no CUDA GPU"]
    npus = [f"{name} (soc {soc})" for soc, name in _npu_socs()]
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
    if soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    if soc in NPU_SOCS:
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
    if soc == CPU:
        return SocProfile(CpuBackend.launch_options, DeviceLimits(), {})
    shared = SHARED_MEMORY_PER_BLOCK_OPTIN.get(soc)
    return SocProfile(CudaBackend.launch_options, DeviceLimits(shared_memory_bytes=shared), {})


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
    gpu_socs = [s for s, _ in _cuda_socs()]
    npu_socs = [] if soc in gpu_socs else [s for s, _ in _npu_socs()]
    if soc is None:
        found = gpu_socs or npu_socs
        if not found:
            return CpuBackend()
        soc = found[0]
    if soc in gpu_socs:
        _compiled()
        return CudaBackend(gpu_socs.index(soc))
    if soc in npu_socs:
        _compiled()
        return NpuBackend(npu_socs.index(soc), npu_mode, npu_options)
    if soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    if soc in NPU_SOCS:
        raise UserError(f"soc {soc!r} needs an Ascend NPU; this machine has: {found_devices()}")
    raise UserError(f"soc {soc!r} is not on this machine; found: {found_devices()}")
