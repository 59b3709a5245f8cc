"""Other work on the device, seen rather than inferred: a fixed calibration kernel per duration
class timed before and after a measurement, and what the device itself reports (NVML's compute
processes on a GPU, `Backend.device_activity`).

A second process sharing a GPU in bursts slows a kernel by how much of it overlaps the bursts:
long kernels more than short ones (issue 27). The probes are fp32 matmuls of fixed sizes, about
0.01 ms to 2 ms on an H200 (a few ms in all, before and after each part), so one lies near most
parts' durations; the one nearest a part moves with what the part saw. A probe that moved beyond noise between before and after a measurement
(the load changed during it), or since its baseline (the load differs from baseline time), makes
the part `contended`; so does another process the device lists as computing.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from ..backends import Backend

#: The probes' matrix sizes (fp32, n x n times n x n: 2 n^3 flops each).
PROBE_SIZES = (512, 1024, 2048, 4096)
#: Timed calls per probe on each side of a measurement, after one warm-up call, more for a short
#: probe until they add up to PROBE_MIN_MS (a 0.01 ms probe's median of 5 would move with the
#: timer's microsecond jitter alone).
PROBE_REPS, PROBE_MIN_MS = 5, 2.0


class Probe:
    """A fixed calibration kernel: one fp32 matmul of `size`, into a buffer it owns (made at the
    first call)."""

    def __init__(self, size: int, device: torch.device) -> None:
        self.size, self.device = size, device
        self.name = f"mm{size}"
        self.buffers: tuple[torch.Tensor, torch.Tensor] | None = None

    def __call__(self) -> None:
        if self.buffers is None:
            gen = torch.Generator().manual_seed(self.size)
            a = torch.randn(self.size, self.size, generator=gen).to(self.device)
            self.buffers = a, torch.empty_like(a)
        a, out = self.buffers
        torch.mm(a, a, out=out)


def probes(backend: Backend) -> list[Probe]:
    """The calibration kernels of a device; none on an interpreter (its times are no device's)."""
    if not backend.calibrates:
        return []
    return [Probe(size, backend.device) for size in PROBE_SIZES]


def calibrate(backend: Backend, kernels: list[Probe]) -> dict[str, float]:
    """Median ms of each probe."""
    return {
        probe.name: statistics.median(
            backend.samples(probe, PROBE_REPS, warmup=1, min_ms=PROBE_MIN_MS)
        )
        for probe in kernels
    }


def nearest(times: dict[str, float], duration_ms: float) -> str:
    """The probe whose time is closest (by ratio) to `duration_ms`."""
    return min(times, key=lambda name: abs(math.log(times[name] / duration_ms)))


@dataclass(frozen=True)
class Seen:
    """What the device showed around one measurement."""

    #: Why it looks shared (one short phrase), None where it looks quiet.
    why: str | None
    #: The largest relative move of a probe near the part (beyond noise or not): how much a
    #: ratio may have moved by the load alone.
    movement: float
    #: As stored with the verdict: the probes' times and the device's report.
    record: dict[str, Any] = field(default_factory=dict)


def judge(
    durations_ms: list[float],
    before: dict[str, float],
    after: dict[str, float],
    at_baseline: dict[str, float] | None,
    activity: dict[str, Any] | None,
    noise: float,
) -> Seen:
    """Seen of a measurement of parts lasting `durations_ms` (the part and its reference), with
    the probes timed `before` and `after` it and at baseline time."""
    record: dict[str, Any] = {"calibration": {"before": before, "after": after}}
    if activity is not None:
        record["activity"] = activity
    reasons, movement = [], 0.0
    pairs = [("during the measurement", before, after)]
    if at_baseline and set(at_baseline) == set(before):
        pairs.append(("since baseline", at_baseline, before))
    names = {nearest(before, d) for d in durations_ms if d > 0} if before else set()
    for when, start, end in pairs:
        for name in sorted(names, key=lambda n: start[n]):
            drift = end[name] / start[name] - 1
            movement = max(movement, abs(drift))
            if abs(drift) > noise:
                reasons.append(
                    f"calibration {name} ({start[name]:.3g} ms) moved {drift:+.1%} {when}"
                )
    others = (activity or {}).get("other_processes")
    if others:
        reasons.append(f"the device lists {others} other compute process{'es' * (others > 1)}")
    why = "; ".join(reasons) or None
    return Seen(why, movement, {**record, "why": why})


class Watch:
    """Probes and the device's report around one measurement: `start()` before, `stop()` after."""

    def __init__(self, backend: Backend, kernels: list[Probe]) -> None:
        self.backend, self.kernels = backend, kernels
        self.before: dict[str, float] = {}
        self.since = 0.0

    def start(self) -> None:
        self.before = calibrate(self.backend, self.kernels)
        self.since = time.time()

    def stop(
        self, durations_ms: list[float], at_baseline: dict[str, float] | None, noise: float
    ) -> Seen:
        after = calibrate(self.backend, self.kernels)
        activity = self.backend.device_activity(self.since)
        return judge(durations_ms, self.before, after, at_baseline, activity, noise)
