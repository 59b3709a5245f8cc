"""How the pages write numbers: times with 4 significant digits, ratios, speedups, changes,
shares."""

from __future__ import annotations

from autotuner.measure.numbers import speedup_text

MISSING = "-"


def ms(value: float | None) -> str:
    """A time in ms: 4 significant digits (whole ms from 1000 on, never an exponent)."""
    if value is None:
        return MISSING
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) < 1e-3:
        return f"{value:.4f}"
    return f"{value:#.4g}"


def ratio(value: float | None) -> str:
    return MISSING if value is None else f"{value:#.3g}"


def speedup(value: float | None) -> str:
    return speedup_text(value)


def change(value: float | None) -> str:
    return MISSING if value is None else f"{value:+.1%}"


def share(value: float | None) -> str:
    """A share of a ceiling, in percent."""
    return MISSING if value is None else f"{value:.0%}"


FILTERS = {"ms": ms, "ratio": ratio, "speedup": speedup, "change": change, "share": share}
