"""How every command and page names a trial's outcome and computes a speedup, so that `run`,
`status`, `report`, `show` and the dashboard cannot disagree."""

from __future__ import annotations


def outcome(state: str, category: str | None) -> str:
    """A trial's outcome in the words `autotune run` prints: "complete"; for a failed trial its
    category (infeasible, host_sync, ub_overflow, ...; "unknown" where none was recorded); else
    the state in lower case (running, waiting, pruned)."""
    if state == "FAIL":
        return category or "unknown"
    return state.lower()


def speedup(default_ms: float | None, tuned_ms: float | None) -> float | None:
    """The default's time over the tuned one; None where either is missing."""
    return default_ms / tuned_ms if default_ms and tuned_ms else None
