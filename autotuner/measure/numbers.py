"""How a measured value is printed in the command line's tables and reports, and on the dashboard."""

from __future__ import annotations


def short_number(x: float | None) -> str:
    """Two significant digits, an exponent outside [0.01, 1000); "-" for none."""
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x:.2g}" if 1e-2 <= abs(x) < 1e3 or x == 0 else f"{x:.1e}"


def speedup_text(x: float | None) -> str:
    """A speedup as every table and page writes it: three significant digits and "x"."""
    return "-" if x is None else f"{x:#.3g}x"
