"""Backends by soc: `get_backend("cpu")`, `get_backend("H200")`, or the device found here."""

from __future__ import annotations

import importlib.util
import os

from ..errors import UserError
from ..socs import CPU, KNOWN_SOCS, NPU_SOCS, soc_from_device_name
from .base import Backend, DeviceLimits, Timing
from .cpu import CpuBackend
from .cuda import CudaBackend

__all__ = ["Backend", "DeviceLimits", "Timing", "get_backend", "found_devices"]


def _cuda_socs() -> list[tuple[str, str]]:
    """(soc, device name) of each CUDA device torch can see."""
    if not CudaBackend.available():
        return []
    return [(soc_from_device_name(name), name) for name in CudaBackend.device_names()]


def found_devices() -> str:
    """One phrase naming what this machine offers, for error messages."""
    parts = [f"{name} (soc {soc})" for soc, name in _cuda_socs()]
    if importlib.util.find_spec("torch_npu") is None:
        npu = "no Ascend NPU (torch_npu not installed)"
    else:
        npu = "torch_npu installed"
    if not parts:
        parts.append("no CUDA GPU")
    return ", ".join([*parts, npu, "cpu (Triton interpreter)"])


def get_backend(soc: str | None = None) -> Backend:
    """The backend for `soc`; None picks the first accelerator found, else the interpreter."""
    gpus = _cuda_socs()
    if soc is None:
        soc = gpus[0][0] if gpus else CPU
    if soc == CPU:
        return CpuBackend()
    gpu_socs = [s for s, _ in gpus]
    if soc not in KNOWN_SOCS and soc not in gpu_socs:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    if soc in gpu_socs:
        if os.environ.get("TRITON_INTERPRET") == "1":
            os.environ["TRITON_INTERPRET"] = "0"
        return CudaBackend(gpu_socs.index(soc))
    if soc in NPU_SOCS:
        raise UserError(f"soc {soc!r} needs an Ascend NPU; this machine has: {found_devices()}")
    raise UserError(f"soc {soc!r} is not on this machine; found: {found_devices()}")
