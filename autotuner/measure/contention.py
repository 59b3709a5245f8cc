"""Is another process sharing the device while a check measures?

A check judges the frozen port by its ratio to a reference measured beside it, which cancels what
moves every kernel alike (clocks, temperature, host load). A second process that keeps the GPU
busy in bursts does not move every kernel alike: a long kernel shares the device with the bursts,
a short one slips between them. Measured on an H200 (issue 27): beside bf16 4096x4096 matmul
bursts, upstream's 4-18 ms references slowed about 1.6x while the ports' 0.15-0.98 ms parts did
not move, so the frozen/reference ratio fell by 35-41% and would have hidden a regression that
large. What tells the two states apart is references of different durations: under clock drift
they move alike, under contention they disagree.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Reference:
    """An unchanged call timed at baseline time and again now, beside the frozen part."""

    source: str  # "upstream", "port_default"
    before_ms: float  # its median at baseline time
    now_ms: float  # its median now

    @property
    def drift(self) -> float:
        return self.now_ms / self.before_ms


def similar(a_ms: float, b_ms: float, factor: float) -> bool:
    """Durations within `factor` of each other."""
    return max(a_ms, b_ms) <= factor * min(a_ms, b_ms)


def closest(durations_ms: list[float], part_ms: float) -> int:
    """The index of the duration closest (by ratio) to the part's: the reference that contention
    moves most like the part."""
    return min(range(len(durations_ms)), key=lambda i: abs(math.log(durations_ms[i] / part_ms)))


def contention(
    references: list[Reference], part_ms: float, noise: float, factor: float
) -> str | None:
    """Why the references say the device is shared now, in one short phrase; None if it looks
    quiet. Contended: two references of dissimilar durations (more than `factor` apart) moved
    differently beyond `noise` since baseline time, or the reference closest to the part's
    `part_ms` is not similar to it and moved beyond `noise` (nothing tells drift from
    contention then)."""
    for a, b in itertools.combinations(references, 2):
        if not similar(a.before_ms, b.before_ms, factor) and abs(a.drift / b.drift - 1) > noise:
            return (
                f"{a.source} ({a.before_ms:.3g} ms) moved {a.drift - 1:+.1%}, "
                f"{b.source} ({b.before_ms:.3g} ms) {b.drift - 1:+.1%}"
            )
    near = references[closest([r.before_ms for r in references], part_ms)]
    if not similar(near.before_ms, part_ms, factor) and abs(near.drift - 1) > noise:
        return (
            f"{near.source} ({near.before_ms:.3g} ms) moved {near.drift - 1:+.1%} and no "
            f"reference is within {factor:g}x of the part's {part_ms:.3g} ms"
        )
    return None
