"""Noise-aware comparisons of timing samples."""

from __future__ import annotations

import math
import statistics


def mann_whitney_less(a: list[float], b: list[float]) -> float:
    """One-sided p-value that samples `a` tend to be smaller than samples `b` (Mann-Whitney U,
    normal approximation with tie correction; fine for the tens of samples a timing gives)."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 1.0
    ranked = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    ranks = [0.0] * len(ranked)
    ties = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and ranked[j + 1][0] == ranked[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t**3 - t
        i = j + 1
    rank_a = sum(r for r, (_, group) in zip(ranks, ranked, strict=True) if group == 0)
    u_a = rank_a - n1 * (n1 + 1) / 2
    n = n1 + n2
    variance = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))) if n > 1 else 0.0
    if variance <= 0:
        return 0.5
    z = (u_a - n1 * n2 / 2 + 0.5) / math.sqrt(variance)  # continuity correction towards the null
    return 0.5 * math.erfc(-z / math.sqrt(2))


def faster_beyond_noise(
    candidate: list[float], reference: list[float], min_gain: float, alpha: float
) -> tuple[bool, float, float]:
    """(is the candidate faster by at least `min_gain` and significantly so, its gain, the p-value)."""
    gain = 1 - statistics.median(candidate) / statistics.median(reference)
    p_value = mann_whitney_less(candidate, reference)
    return gain >= min_gain and p_value < alpha, gain, p_value
