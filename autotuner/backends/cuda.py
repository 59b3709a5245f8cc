"""NVIDIA GPUs through Triton; times with CUDA events, L2 flushed between repetitions."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any, ClassVar

import torch

from core.limits import DeviceLimits
from core.socs import BackendKind, soc_from_device_name

from .base import Backend, DeviceEvents, Timer, Timing

_FLUSH_BYTES = 256 * 1024 * 1024
#: A spin of about 100 us at 2 GHz, longer than our launchers' host overhead.
_HOST_COVER_CYCLES = 200_000
#: Parts faster than this (ms) are timed a second way too (`CudaBackend.cross_check`): replayed
#: from a CUDA graph, where no launch overhead can reach the number.
CROSS_CHECK_BELOW_MS = 0.05
#: Calls captured in the cross-check's graph, and how often the graph is replayed and timed.
_GRAPH_CALLS, _GRAPH_REPLAYS = 20, 10


class CudaEvents(DeviceEvents):
    """CUDA events around each call, L2 flushed and a device spin covering the launch before each."""

    name: ClassVar[str] = "cuda-events"
    kinds: ClassVar[frozenset[BackendKind]] = frozenset({BackendKind.CUDA})

    def event(self) -> torch.cuda.Event:
        return torch.cuda.Event(enable_timing=True)

    def cover_launch(self) -> None:
        # Keep the GPU busy while the host enqueues the start event and the launch, so the
        # interval holds the kernel alone, not the launcher's Python overhead.
        torch.cuda._sleep(_HOST_COVER_CYCLES)

    def describe(self, backend: Backend) -> str:
        return (
            "cuda events around each call, 256 MiB zeroed and a device spin covering the "
            "launch before each"
        )


class CudaBackend(Backend):
    kind: ClassVar[BackendKind] = BackendKind.CUDA
    launch_options: frozenset[str] = frozenset({"num_warps", "num_stages"})
    timer: Timer = CudaEvents()

    def __init__(self, index: int = 0) -> None:
        self._device = torch.device("cuda", index)
        props = torch.cuda.get_device_properties(self._device)
        self.device_name = props.name
        self.soc = soc_from_device_name(props.name)
        self.limits = DeviceLimits(
            shared_memory_bytes=getattr(props, "shared_memory_per_block_optin", None),
            cores=props.multi_processor_count,
        )
        self._flush_buffer: torch.Tensor | None = None

    @staticmethod
    def available() -> bool:
        return torch.cuda.is_available() and torch.cuda.device_count() > 0

    @staticmethod
    def device_names() -> list[str]:
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]

    @classmethod
    def found_devices(cls) -> list[tuple[str, str]]:
        """(soc, device name) of each CUDA device torch can see."""
        if not cls.available():
            return []
        return [(soc_from_device_name(name), name) for name in cls.device_names()]

    @classmethod
    def open(cls, index: int, npu_mode: str, npu_options: tuple[str, ...]) -> CudaBackend:
        return cls(index)

    @property
    def device(self) -> torch.device:
        return self._device

    def synchronize(self) -> None:
        torch.cuda.synchronize(self._device)

    def free_memory(self) -> int | None:
        return torch.cuda.mem_get_info(self._device)[0]

    def release_memory(self) -> None:
        torch.cuda.empty_cache()

    def device_activity(self, since: float) -> dict[str, Any] | None:
        from .nvml import activity

        return activity(self._device, since)

    def flush_l2(self) -> None:
        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(_FLUSH_BYTES, dtype=torch.int8, device=self._device)
        self._flush_buffer.zero_()

    def cross_check(self, fn: Callable[[], Any], timing: Timing) -> dict[str, Any]:
        """For a part under CROSS_CHECK_BELOW_MS, its time replayed from a CUDA graph, as
        `triton.testing.do_bench_cudagraph` times (per call: a replay of _GRAPH_CALLS calls over
        _GRAPH_CALLS; no L2 flush between the calls, so a warm-cache number)."""
        if timing.median_ms >= CROSS_CHECK_BELOW_MS:
            return {}
        try:
            graph_ms = self._graph_ms(fn)
        except RuntimeError as exc:  # e.g. work the graph cannot capture
            return {"graph_check": f"not capturable: {str(exc).splitlines()[0]}"}
        return {"graph_ms": graph_ms, "events_over_graph": timing.median_ms / graph_ms}

    def _graph_ms(self, fn: Callable[[], Any]) -> float:
        current = torch.cuda.current_stream(self._device)
        side = torch.cuda.Stream(self._device)
        side.wait_stream(current)
        with torch.cuda.stream(side):  # a capture wants its work warmed up off the main stream
            fn()
        current.wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(_GRAPH_CALLS):
                fn()
        graph.replay()
        per_call = []
        for _ in range(_GRAPH_REPLAYS):
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            start.record()
            graph.replay()
            end.record()
            end.synchronize()
            per_call.append(start.elapsed_time(end) / _GRAPH_CALLS)
        return statistics.median(per_call)

    def versions(self) -> dict[str, str]:
        import triton

        out = {
            "torch": torch.__version__,
            "triton": triton.__version__,
            "cuda_runtime": str(torch.version.cuda),
            "device": self.device_name,
            "timer": f"{self.timer.describe(self)}; parts under {CROSS_CHECK_BELOW_MS} ms also "
            "replayed from a CUDA graph (graph_ms)",
        }
        try:
            import subprocess

            driver = (
                subprocess.run(
                    ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=False,
                )
                .stdout.strip()
                .splitlines()
            )
            if driver:
                out["driver"] = driver[0]
        except (OSError, subprocess.SubprocessError):
            pass
        return out
