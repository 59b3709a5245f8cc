"""What NVML says of the processes computing on a GPU (`nvidia-ml-py`, imported as `pynvml`,
where installed; nothing otherwise).

In a container NVML lists processes by the host's pids, which need not match `os.getpid()`;
where this process's pid is not among them, it is taken as one of them (it holds a context on the
device while it measures) and the others are the rest. NVML's per-process utilisation samples since a time tell a process that
computed from one that only holds a context; where the device does not keep them, every listed
process counts.
"""

from __future__ import annotations

import os
from typing import Any

import torch


def _handle(pynvml: Any, device: torch.device) -> Any:
    """The NVML handle of a torch device: by its UUID (CUDA_VISIBLE_DEVICES renumbers), else
    by its index."""
    uuid = getattr(torch.cuda.get_device_properties(device), "uuid", None)
    if uuid is not None:
        try:
            return pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
        except pynvml.NVMLError:
            pass
    return pynvml.nvmlDeviceGetHandleByIndex(device.index or 0)


def activity(device: torch.device, since: float) -> dict[str, Any] | None:
    """{listed, computed, utilization_percent, other_processes} of the device since `since`
    (time.time()); None without pynvml or where NVML cannot answer."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
        handle = _handle(pynvml, device)
        listed = {p.pid for p in pynvml.nvmlDeviceGetComputeRunningProcesses(handle)}
        out: dict[str, Any] = {
            "listed": len(listed),
            "utilization_percent": pynvml.nvmlDeviceGetUtilizationRates(handle).gpu,
        }
        try:
            samples = pynvml.nvmlDeviceGetProcessUtilization(handle, int(since * 1e6))
            computed = {s.pid for s in samples if s.smUtil > 0}
            out["computed"] = len(computed)
            busy = computed
        except pynvml.NVMLError:  # not kept by this device or driver
            busy = listed
        ours = os.getpid()
        out["other_processes"] = len(busy - {ours}) if ours in listed else max(0, len(busy) - 1)
        return out
    except pynvml.NVMLError:
        return None
