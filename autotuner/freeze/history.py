"""History of frozen versions for `autotune show` (and the dashboard): the database's versions,
and per frozen entry the one of the label it replaced (M1 -> M2), timed beside it."""

from __future__ import annotations

import statistics
from typing import Any

from sqlalchemy import select

from storage import Database, FrozenVersion

from ..search.verdict import Retimed


def history_rows(db: Database, op: str, soc: str | None) -> list[tuple[str, str, str, str, str]]:
    query = select(FrozenVersion).where(FrozenVersion.op == op).order_by(FrozenVersion.id)
    if soc:
        query = query.where(FrozenVersion.soc == soc)
    rows = []
    with db.sessions() as session:
        for version in session.scalars(query):
            speedups = [
                e["speedup_over_default"]
                for e in version.entries.values()
                if e.get("speedup_over_default")
            ]
            geomean = statistics.geometric_mean(speedups) if speedups else None
            rows.append(
                (
                    version.soc,
                    version.label,
                    version.created_at.strftime("%Y-%m-%d %H:%M"),
                    str(len(version.entries)),
                    f"{geomean:.3f}x" if geomean else "-",
                )
            )
    return rows


def previous_entry(
    old: dict[str, Any] | None,
    old_section: dict[str, Any] | None,
    label: str,
    config: dict[str, Any],
    retimed: tuple[Retimed, ...],
) -> dict[str, Any] | None:
    """What a frozen entry of `label` records of the entry of the label before it: that label
    (the old entry's own, else its section's), date, config and median as frozen then, and, where
    the study re-timed that config interleaved with the winner `config` (the settlement re-times
    a frozen config it measured), both medians of that one run and their ratio. Re-frozen under
    the same label, an entry keeps its record of the label before, the side-by-side numbers
    taken from this re-timing or left out."""
    if old is None or old_section is None:
        return None
    old_label = old.get("label") or old_section.get("label")
    if old_label == label:
        kept = old.get("previous")
        if kept is None:
            return None
        record = {k: kept[k] for k in ("label", "date", "config", "median_ms") if k in kept}
    else:
        record = {
            "label": old_label,
            "date": old.get("tuned_at") or old_section.get("date"),
            "config": old.get("config"),
            "median_ms": old.get("median_ms"),
        }
    before = next((r for r in retimed if r.config == record["config"]), None)
    after = next((r for r in retimed if r.config == config), None)
    if before and after:
        record.update(
            retimed_ms=before.median_ms,
            retimed_now_ms=after.median_ms,
            speedup=before.median_ms / after.median_ms,
        )
    return record
