"""The A/B line of the A/B scripts (`benchmarks/*_ab.py`): variants of a
kernel timed interleaved, each judged against one of them by the search's A/B rule (at least 1%
faster or slower with a one-sided Mann-Whitney p < 0.01), outputs compared bit for bit where a
variant names the tensors it writes."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch

from autotuner.measure.stats import faster_beyond_noise

MIN_GAIN, ALPHA = 0.01, 0.01
#: A variant: a call of it, and the tensors that call writes.
Call = tuple[Callable[[], object], tuple[torch.Tensor, ...]]


def ab_line(backend, fns: dict[str, Call], rounds: int, reps: int, reference: str = "port") -> str:
    """Each variant's median (p20-p80, n), its change against `reference`, its verdict (wins,
    loses, ties) and whether its outputs equal the reference's; `rounds` rounds of `reps` calls
    of each in turn, on the project's timer (`Backend.samples`)."""
    for fn, _ in fns.values():
        fn()  # compile, and the outputs compared below
    backend.synchronize()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, (fn, _) in fns.items():
            samples[name] += backend.samples(fn, reps)
    base, base_outs = samples[reference], fns[reference][1]
    cells = []
    for name, times in samples.items():
        wins, gain, _ = faster_beyond_noise(times, base, MIN_GAIN, ALPHA)
        loses = faster_beyond_noise(base, times, MIN_GAIN, ALPHA)[0]
        verdict = "" if name == reference else " wins" if wins else " loses" if loses else " ties"
        same = all(torch.equal(a, b) for a, b in zip(fns[name][1], base_outs, strict=True))
        compared = f", same {same}" if base_outs else ""  # no tensors given: none compared
        q = statistics.quantiles(times, n=5)
        cells.append(
            f"{name} {statistics.median(times):.4f} ({q[0]:.4f}-{q[3]:.4f}, n={len(times)},"
            f" {-gain:+.1%} vs {reference}{verdict}{compared})"
        )
    return "; ".join(cells)
