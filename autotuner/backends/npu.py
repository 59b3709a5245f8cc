"""Huawei Ascend NPUs through torch_npu and triton-ascend; times with NPU events, L2 flushed.

torch_npu is imported only when an NPU is asked for: it registers the `torch.npu` namespace and
needs the CANN libraries of the host (`source .../ascend-toolkit/set_env.sh`).

What the search may vary depends on the soc:

- `multibuffer` (triton-ascend's `--enable-auto-multi-buffer`) on every soc: the compiler double-
  buffers a loop's tiles in the unified buffer, so a config needs twice its tiles there.
- `num_warps` only on the 950 family (`SIMT_SOCS`). triton-ascend compiles in SIMD mode by default
  and ignores `num_warps` there; it passes `--num-warps` to its compiler only in SIMT mode, which
  only the 950's vector cores run. On 910B and 910_93 it can never matter, so it is left out of
  their spaces instead of spending trials that compile one kernel several times.
- `num_stages` on none: triton-ascend's compiler does not read it (multibuffer is its pipelining).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import platform
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import torch

from ..errors import UserError
from ..socs import NPU_SOCS, soc_from_device_name
from .base import Backend, DeviceLimits

#: Unified buffer (UB) of one AI core in bytes, by soc: the on-chip memory a program's tiles must
#: fit in. 910B (Atlas A2) and 910_93 (Atlas A3): 192 KiB; 950PR and 950DT: 248 KiB. An Ascend soc
#: missing here (an unknown device name kept verbatim) gets no static UB check: its overflows show
#: up as "ub_overflow" failures instead.
UNIFIED_BUFFER_BYTES = {
    "910B": 192 * 1024,
    "910_93": 192 * 1024,
    "950PR": 248 * 1024,
    "950DT": 248 * 1024,
}
#: The runtime refuses a launch of more blocks than this, whatever the grid's shape.
MAX_TOTAL_BLOCKS = 65535
#: Socs whose vector cores also run SIMT code, where `num_warps` can matter.
SIMT_SOCS = ("950PR", "950DT")
#: Zeroed between repetitions: more than the L2 of any of these socs (192 MB on the 910B).
_FLUSH_BYTES = 256 * 1024 * 1024


def npu_limits(soc: str) -> DeviceLimits:
    """The static limits of a soc (core counts are only known from a device)."""
    return DeviceLimits(
        unified_buffer_bytes=UNIFIED_BUFFER_BYTES.get(soc), max_total_blocks=MAX_TOTAL_BLOCKS
    )


def npu_launch_options(soc: str) -> frozenset[str]:
    """The launch options worth searching on a soc (see the module's docstring)."""
    return frozenset({"multibuffer", *(("num_warps",) if soc in SIMT_SOCS else ())})


def npu_soc(device_name: str) -> str:
    """`Ascend950PR_9599` -> `950PR`; an unknown name is kept verbatim, with a warning."""
    soc = soc_from_device_name(device_name)
    if soc not in NPU_SOCS:
        warnings.warn(
            f"unknown Ascend device {device_name!r}: its soc is kept as {soc!r}, with no "
            "unified-buffer size to check tiles against",
            stacklevel=2,
        )
    return soc


def cann_version() -> str:
    """The CANN toolkit's version from its install record, else "unknown"."""
    for variable in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        home = os.environ.get(variable)
        if not home:
            continue
        info = Path(home) / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
        if info.is_file():
            for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "version" and value.strip():
                    return value.strip()
    return "unknown"


def _torch_npu_problem() -> str | None:
    """Why torch_npu cannot be used here; None once it is imported (which registers torch.npu)."""
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu not installed"
    try:
        import torch_npu  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - e.g. CANN libraries missing: say so in one line
        lines = str(exc).strip().splitlines()
        return f"torch_npu does not import ({type(exc).__name__}: {lines[0] if lines else ''})"
    return None


def _npu() -> Any:
    """The `torch.npu` namespace torch_npu registers."""
    return torch.npu  # type: ignore[attr-defined]


class NpuBackend(Backend):
    kind: ClassVar[str] = "npu"
    #: torch's device type of the NPU's tensors (tests stand in "cpu").
    device_type: ClassVar[str] = "npu"

    def __init__(self, index: int = 0) -> None:
        problem = NpuBackend.unavailable()
        if problem:
            raise UserError(f"no Ascend NPU to use: {problem}")
        npu = _npu()
        self.index = index
        self.device_name = npu.get_device_name(index)
        self.soc = npu_soc(self.device_name)
        self.launch_options = npu_launch_options(self.soc)
        props = npu.get_device_properties(index)
        self.limits = dataclasses.replace(
            npu_limits(self.soc),
            cores=getattr(props, "cube_core_num", None),
            vector_cores=getattr(props, "vector_core_num", None),
        )
        self._flush_buffer: torch.Tensor | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why no NPU can be used here (torch_npu missing or broken, no device), or None."""
        problem = _torch_npu_problem()
        if problem:
            return problem
        npu = _npu()
        if not (npu.is_available() and npu.device_count() > 0):
            return "torch_npu sees no device"
        return None

    @staticmethod
    def available() -> bool:
        return NpuBackend.unavailable() is None

    @staticmethod
    def device_names() -> list[str]:
        npu = _npu()
        return [npu.get_device_name(i) for i in range(npu.device_count())]

    @property
    def device(self) -> torch.device:
        return torch.device(self.device_type, self.index)

    def synchronize(self) -> None:
        _npu().synchronize(self.index)

    def flush_l2(self) -> None:
        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(_FLUSH_BYTES, dtype=torch.int8, device=self.device)
        self._flush_buffer.zero_()

    def _elapsed_ms(self, fn: Callable[[], Any], reps: int) -> list[float]:
        # torch.npu has no spin kernel to cover the host's launch overhead; the flush enqueued just
        # before keeps the device busy while the host records the start event and launches.
        npu = _npu()
        starts = [npu.Event(enable_timing=True) for _ in range(reps)]
        ends = [npu.Event(enable_timing=True) for _ in range(reps)]
        for start, end in zip(starts, ends, strict=True):
            self.flush_l2()
            start.record()
            fn()
            end.record()
        self.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]

    def versions(self) -> dict[str, str]:
        import torch_npu
        import triton

        return {
            "torch": torch.__version__,
            "torch_npu": str(getattr(torch_npu, "__version__", "unknown")),
            "triton": triton.__version__,  # triton-ascend installs as `triton`
            "cann": cann_version(),
            "device": self.device_name,
        }
