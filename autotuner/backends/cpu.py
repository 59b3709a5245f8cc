"""The Triton interpreter on the host CPU: correctness and CI, never performance."""

from __future__ import annotations

import os
import platform
from typing import ClassVar

import torch

from core.limits import DeviceLimits
from core.socs import CPU, BackendKind

from .base import Backend
from .interpreter import enable_bfloat16_dot, enable_bfloat16_rounding


class CpuBackend(Backend):
    kind: ClassVar[BackendKind] = BackendKind.CPU
    # The interpreter accepts and ignores these, so the search space keeps the shape it has on a GPU.
    launch_options: frozenset[str] = frozenset({"num_warps", "num_stages"})
    is_interpreter: ClassVar[bool] = True
    calibrates: ClassVar[bool] = False

    def __init__(self) -> None:
        os.environ["TRITON_INTERPRET"] = "1"
        enable_bfloat16_dot()
        enable_bfloat16_rounding()
        self.soc = CPU
        self.device_name = f"Triton interpreter on {platform.processor() or platform.machine()}"
        self.limits = DeviceLimits()

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    def synchronize(self) -> None:
        pass

    def versions(self) -> dict[str, str]:
        import triton

        return {"torch": torch.__version__, "triton": triton.__version__, "interpreter": "1"}

    def time(self, fn, **kw):  # type: ignore[override]
        kw.setdefault("min_reps", 3)
        kw.setdefault("max_reps", 20)
        kw.setdefault("warmup_ms", 0.0)
        return super().time(fn, **kw)
