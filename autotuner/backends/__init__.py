"""Backends by soc: `get_backend("cpu")`, `get_backend("H200")`, `get_backend("950PR")`, or the
device found here."""

from __future__ import annotations

import os

from ..errors import UserError
from ..socs import CPU, KNOWN_SOCS, NPU_SOCS, soc_from_device_name
from .base import Backend, DeviceLimits, Timing
from .cpu import CpuBackend
from .cuda import CudaBackend
from .npu import NpuBackend, npu_soc

__all__ = ["Backend", "DeviceLimits", "Timing", "device_indices", "get_backend", "found_devices"]


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


def _compiled() -> None:
    """Kernels of a device backend run compiled, not in the interpreter."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        os.environ["TRITON_INTERPRET"] = "0"


def get_backend(soc: str | None = None) -> Backend:
    """The backend for `soc`; None picks the first accelerator found, else the interpreter."""
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
        return NpuBackend(npu_socs.index(soc))
    if soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    if soc in NPU_SOCS:
        raise UserError(f"soc {soc!r} needs an Ascend NPU; this machine has: {found_devices()}")
    raise UserError(f"soc {soc!r} is not on this machine; found: {found_devices()}")
