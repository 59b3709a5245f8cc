"""Accuracy metrics and verdicts after the CANN precision standards (see docs/accuracy.md).

Errors are measured against a float64 golden. Relative errors use |golden| + 1e-7 as denominator
and are taken over the normal domain |golden| >= s(dtype); elements in the small-value domain are
judged by absolute error instead (count of |actual - golden| > e(dtype)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch

#: Single-reference threshold T: MERE < T and MARE < 10 T.
THRESHOLD = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-13}
#: Small-value domain: (|golden| below this is "small", absolute error above this is an error).
SMALL_VALUE = {
    "float16": (2**-11, 2**-16),
    "bfloat16": (2**-8, 2**-16),
    "float32": (2**-14, 2**-30),
}
#: Dual-reference limits on the port/upstream ratios of (MARE, MERE, RMSE).
LEVELS = {"L0": (10.0, 2.0, 2.0), "L1": (5.0, 1.5, 1.5), "L2": (2.0, 1.2, 1.2)}
Level = Literal["L0", "L1", "L2"]
_EPS = 1e-7


@dataclass(frozen=True)
class Errors:
    """Errors of one output against its golden."""

    mare: float
    mere: float
    rmse: float
    small_errors: int  # small-domain elements whose absolute error is over e(dtype)
    small_total: int
    finite: bool  # False if the output has NaN/inf where the golden is finite


def measure(actual: torch.Tensor, golden: torch.Tensor, dtype: str) -> Errors:
    g = golden.detach().to(torch.float64).flatten()  # on the golden's device
    a = actual.detach().to(g.device, torch.float64).flatten()
    if a.shape != g.shape:
        raise ValueError(f"output has {a.numel()} elements, golden {g.numel()}")
    finite = bool(torch.isfinite(a[torch.isfinite(g)]).all())
    diff = (a - g).abs()
    small_threshold, small_error = SMALL_VALUE[dtype]
    normal = g.abs() >= small_threshold
    rel = diff[normal] / (g[normal].abs() + _EPS)
    small = diff[~normal]
    return Errors(
        mare=float(rel.max()) if rel.numel() else 0.0,
        mere=float(rel.mean()) if rel.numel() else 0.0,
        rmse=float(diff.pow(2).mean().sqrt()) if diff.numel() else 0.0,
        small_errors=int((small > small_error).sum()),
        small_total=int(small.numel()),
        finite=finite,
    )


def ratio(port: float, upstream: float) -> float:
    """port / upstream, with 0/0 = 1 (both exact) and x/0 = inf."""
    if upstream == 0.0:
        return 1.0 if port == 0.0 else math.inf
    return port / upstream


@dataclass(frozen=True)
class Verdict:
    passed: bool
    #: "dual": ratios to the second reference met the level; "golden": they did not, and the RFC's
    #: fallback to the float64 golden alone (single-reference thresholds) passed; "single": no
    #: second reference, judged on the golden alone.
    mode: str
    reason: str  # why it failed, or ""


def single_reference(e: Errors, dtype: str) -> str:
    """Empty if the errors meet the single-reference thresholds, else the first failure."""
    t = THRESHOLD[dtype]
    if not e.finite:
        return "non-finite output"
    if e.mere >= t:
        return f"MERE {e.mere:.3g} >= {t:.3g}"
    if e.mare >= 10 * t:
        return f"MARE {e.mare:.3g} >= {10 * t:.3g}"
    return ""


def dual_reference(port: Errors, upstream: Errors, level: Level) -> str:
    """Empty if the port/upstream ratios meet the level's limits, else the first failure."""
    if not port.finite:
        return "non-finite output"
    limits = LEVELS[level]
    for name, p, u, limit in zip(
        ("MARE", "MERE", "RMSE"),
        (port.mare, port.mere, port.rmse),
        (upstream.mare, upstream.mere, upstream.rmse),
        limits,
        strict=True,
    ):
        r = ratio(p, u)
        if r > limit:
            return f"{name} ratio {r:.3g} > {limit:g}"
    # Small-value error counts, floored at 1% of the domain so a handful of elements cannot decide.
    floor = max(1.0, 0.01 * port.small_total)
    r = (port.small_errors + floor) / (upstream.small_errors + floor)
    if r > limits[1]:
        return f"small-value error count ratio {r:.3g} > {limits[1]:g}"
    return ""


def judge(port: Errors, upstream: Errors | None, dtype: str, level: Level) -> Verdict:
    """Dual reference where a second reference ran; where it fails, the RFC falls back to the golden."""
    if upstream is None:
        reason = single_reference(port, dtype)
        return Verdict(not reason, "single", reason)
    dual = dual_reference(port, upstream, level)
    if not dual:
        return Verdict(True, "dual", "")
    single = single_reference(port, dtype)
    return Verdict(
        not single, "golden" if not single else "dual", f"{dual}; {single}" if single else dual
    )
