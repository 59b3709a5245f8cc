"""The ops the service knows: those of `ops` and those found only in the database, with the socs
they have data on (in the database or frozen in the checkout)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select, union
from sqlalchemy.orm import Session

from autotuner.measure.toolchain import stale_configs, stale_line
from autotuner.report.frozen import repository_versions
from ops import all_ops
from storage import Baseline, CheckVerdict, FrozenVersion, StudyRecord

from .schemas import OpOut


def _socs_by_op(session: Session, root: Path | None) -> dict[str, set[str]]:
    """Op -> the socs it has rows for (studies, frozen versions, baselines, checks) or frozen
    entries in the checkout."""
    models = (StudyRecord, FrozenVersion, Baseline, CheckVerdict)
    found: dict[str, set[str]] = {}
    for version in repository_versions(root):
        found.setdefault(version.op, set()).add(version.soc)
    for op, soc in session.execute(union(*(select(m.op, m.soc) for m in models))):
        found.setdefault(op, set()).add(soc)
    return found


def known_ops(session: Session, root: Path | None) -> list[OpOut]:
    specs = all_ops()
    socs = _socs_by_op(session, root)
    out = []
    for name in sorted({*specs, *socs}):
        spec = specs.get(name)
        stale = stale_configs(spec) if spec else []
        out.append(
            OpOut(
                name=name,
                known=spec is not None,
                kernels=[k.name for k in spec.kernels] if spec else [],
                parts={p: list(k) for p, k in spec.parts.items()} if spec else {},
                socs=sorted(socs.get(name, ())),
                stale_configs=len(stale),
                stale=stale_line(name, stale),
            )
        )
    return out
