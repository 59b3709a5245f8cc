"""The small interface every device backend implements."""

from __future__ import annotations

import statistics
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import torch

from core.limits import DeviceLimits
from core.socs import BackendKind


@dataclass(frozen=True)
class Timing:
    """Kernel time over repetitions, in milliseconds."""

    median_ms: float
    p20_ms: float
    p80_ms: float
    n: int

    @classmethod
    def of(cls, samples: list[float]) -> Timing:
        """Median, p20, p80 and count of single-call times (ms), in any order."""
        ordered = sorted(samples)
        return cls(
            quantile(ordered, 0.5), quantile(ordered, 0.2), quantile(ordered, 0.8), len(ordered)
        )

    @property
    def spread(self) -> float:
        """Relative width of the p20..p80 band around the median."""
        return (self.p80_ms - self.p20_ms) / self.median_ms if self.median_ms > 0 else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


class Timer(ABC):
    """A timing method: single-call times of a callable on a backend's device. Registered by
    name in `backends.TIMERS` (`autotune run --timer NAME`); each backend class names its default."""

    name: ClassVar[str]
    #: The backend kinds whose devices it can time.
    kinds: ClassVar[frozenset[BackendKind]]

    @abstractmethod
    def elapsed_ms(self, backend: Backend, fn: Callable[[], Any], reps: int) -> list[float]:
        """The times (ms) of `reps` calls of `fn`, one by one, the caches flushed before each."""

    @abstractmethod
    def describe(self, backend: Backend) -> str:
        """How it times, in a phrase, for the versions a number records."""


class DeviceEvents(Timer):
    """A device's timing events around each call, the caches flushed before each; a device
    gives its event class and what keeps it busy while the host enqueues the start and launch."""

    @abstractmethod
    def event(self) -> Any:
        """A timing event of the device (`torch.cuda.Event(enable_timing=True)`, say)."""

    def cover_launch(self) -> None:
        """Enqueue device work that outlasts the host's launch overhead (none by default)."""

    def elapsed_ms(self, backend: Backend, fn: Callable[[], Any], reps: int) -> list[float]:
        starts = [self.event() for _ in range(reps)]
        ends = [self.event() for _ in range(reps)]
        for start, end in zip(starts, ends, strict=True):
            backend.flush_l2()
            self.cover_launch()
            start.record()
            fn()
            end.record()
        backend.synchronize()
        return [s.elapsed_time(e) for s, e in zip(starts, ends, strict=True)]


class HostClock(Timer):
    """Host clocks around each call, the device synchronized before and after: any backend."""

    name: ClassVar[str] = "host"
    kinds: ClassVar[frozenset[BackendKind]] = frozenset(BackendKind)

    def elapsed_ms(self, backend: Backend, fn: Callable[[], Any], reps: int) -> list[float]:
        out = []
        for _ in range(reps):
            backend.flush_l2()
            backend.synchronize()
            start = time.perf_counter()
            fn()
            backend.synchronize()
            out.append((time.perf_counter() - start) * 1e3)
        return out

    def describe(self, backend: Backend) -> str:
        return "host clock around each call, the device synchronized before and after"


def quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    if len(sorted_values) == 1:
        return sorted_values[0]
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Backend(ABC):
    """Detects a device and its soc, moves tensors there, synchronizes and times callables."""

    kind: ClassVar[BackendKind]
    #: Triton launch options (beyond constexpr tunables) this backend understands; on Ascend they
    #: depend on the soc, so an instance may set its own.
    launch_options: frozenset[str]
    #: What a launch that leaves a launch option out gets, where the backend knows it better than
    #: the kernel spec's `Tunable.default` (e.g. multibuffer per Ascend soc). Never mutated.
    option_defaults: dict[str, int | str] = {}
    #: True where times are interpreter times: correctness only, never a performance claim.
    is_interpreter: ClassVar[bool] = False
    #: Whether a check times calibration kernels around its measurements
    #: (`autotuner.measure.device_load`): on a device, not on the host's interpreter.
    calibrates: ClassVar[bool] = True

    soc: str
    device_name: str
    limits: DeviceLimits
    #: How it times; each kind's default here, `open_backend` sets the one a spec names.
    timer: Timer = HostClock()

    @classmethod
    def found_devices(cls) -> list[tuple[str, str]]:
        """(soc, device name) of each device of this kind here, in torch's order; none by default."""
        return []

    @classmethod
    def open(cls, index: int, npu_mode: str, npu_options: tuple[str, ...]) -> Backend:
        """The backend of device `index` of `found_devices()`; `npu_mode` and `npu_options` are
        how an Ascend NPU compiles (`open_backend` has checked that only an NPU gets others than
        "simd" and none)."""
        raise NotImplementedError(f"a {cls.kind} backend has no device to open")

    @property
    @abstractmethod
    def device(self) -> torch.device: ...

    @abstractmethod
    def synchronize(self) -> None: ...

    @abstractmethod
    def versions(self) -> dict[str, str]:
        """Versions of the software stack that produced a number (driver, runtime, compiler)."""

    def compiler_notes(self) -> dict[str, bool | int]:
        """What the compiler said of the kernels compiled since the last call, for the trial's
        record (Ascend: a multibuffer fallback, the UB used); nothing by default."""
        return {}

    def free_memory(self) -> int | None:
        """Bytes of device memory free now, where the backend can tell; None where it cannot
        or where the device's memory is the host's (the interpreter)."""
        return None

    def device_activity(self, since: float) -> dict[str, Any] | None:
        """What the device reports of the processes computing on it since `since` (time.time()),
        with `other_processes` (how many besides this one); None where it reports nothing."""
        return None

    def release_memory(self) -> None:  # noqa: B027 (a no-op where nothing is cached)
        """Give the allocator's cached, unused blocks back: other worker processes share the device."""

    def flush_l2(self) -> None:  # noqa: B027 (a no-op where there is no cache to flush)
        """Evict the caches between repetitions so each one reads from device memory."""

    def _elapsed_ms(self, fn: Callable[[], Any], reps: int) -> list[float]:
        """Times `reps` calls of `fn` one by one with the backend's timer."""
        return self.timer.elapsed_ms(self, fn, reps)

    def time(
        self,
        fn: Callable[[], Any],
        *,
        warmup_ms: float = 10.0,
        rep_ms: float = 60.0,
        min_reps: int = 10,
        max_reps: int = 1000,
    ) -> Timing:
        """Median, p20 and p80 of `fn` after a warm-up; the first call (compile) is not timed.

        The repetitions fill about `rep_ms` of wall time, the cache flush and the host cover of
        each repetition included, so a trial costs about what `triton.testing.do_bench` spends.
        """
        fn()
        self.synchronize()
        start = time.perf_counter()
        estimate = statistics.median(self._elapsed_ms(fn, 3))
        wall_per_rep = (time.perf_counter() - start) * 1e3 / 3
        per_call = max(estimate, 1e-3)
        for _ in range(max(1, int(warmup_ms / per_call))):
            fn()
        reps = min(max_reps, max(min_reps, int(rep_ms / max(wall_per_rep, per_call))))
        return Timing.of(self._elapsed_ms(fn, reps))

    def cross_check(self, fn: Callable[[], Any], timing: Timing) -> dict[str, Any]:  # noqa: B027
        """A second timing method's number for `timing` of `fn`, where the backend has one and
        the first may not be trusted (a short kernel); nothing by default."""
        return {}

    def samples(
        self, fn: Callable[[], Any], reps: int, warmup: int = 3, min_ms: float = 0.0
    ) -> list[float]:
        """At least `reps` single-call times (ms) after `warmup` calls, more for a short kernel
        until they add up to `min_ms`; in the order they ran."""
        for _ in range(warmup):
            fn()
        out = self._elapsed_ms(fn, reps)
        median = statistics.median(out)
        if median > 0 and sum(out) < min_ms:
            out += self._elapsed_ms(fn, min(10 * reps, int((min_ms - sum(out)) / median) + 1))
        return out

    def describe(self) -> str:
        return f"{self.kind}:{self.soc} ({self.device_name})"
