"""History of frozen versions for `autotune show` (and the dashboard)."""

from __future__ import annotations

import statistics

from sqlalchemy import select

from storage import Database, FrozenVersion


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
