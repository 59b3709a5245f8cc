"""The newest row of each group (frozen versions, baselines, checks, verdicts), picked in SQL."""

from __future__ import annotations

from sqlalchemy import Select, and_, func, select
from sqlalchemy.orm import Session, defer

from autotuner.settings import settings
from core.socs import BackendKind
from storage import AccuracyResult, Baseline, CheckVerdict, DeviceCeiling, FrozenVersion

from .paging import filters


def _newest_ids(model, group: tuple, at, *where) -> Select:
    """Ids of the newest row of each group: latest `at`, then highest id (index-friendly)."""
    latest = select(*group, func.max(at).label("at")).where(*where).group_by(*group).subquery()
    on = and_(*(column == latest.c[column.key] for column in group), at == latest.c.at)
    return (
        select(func.max(model.id))
        .select_from(model)
        .join(latest, on)
        .where(*where)
        .group_by(*group)
    )


def frozen_versions(session: Session, op: str | None, soc: str | None) -> list[FrozenVersion]:
    """The newest frozen version of each (op, soc)."""
    where = filters(FrozenVersion, op=op, soc=soc)
    ids = (
        select(func.max(FrozenVersion.id))
        .where(*where)
        .group_by(FrozenVersion.op, FrozenVersion.soc)
    )
    return list(session.scalars(select(FrozenVersion).where(FrozenVersion.id.in_(ids))))


def baselines(session: Session, op: str | None, soc: str | None) -> list[Baseline]:
    """The newest baseline of each (op, soc, case, part, source), without its samples."""
    ids = _newest_ids(
        Baseline,
        (Baseline.op, Baseline.soc, Baseline.case_name, Baseline.part, Baseline.source),
        Baseline.measured_at,
        *filters(Baseline, op=op, soc=soc),
    )
    query = select(Baseline).where(Baseline.id.in_(ids))
    return list(
        session.scalars(query.options(defer(Baseline.samples), defer(Baseline.environment)))
    )


def gpu_baselines(session: Session, op: str | None) -> list[Baseline]:
    """The GPU baseline of each (op, case, part): the newest upstream row measured on a GPU (not
    on an NPU, not by the interpreter), of AUTOTUNE_GPU_SOC where that is set, else of any GPU.

    Picked from the newest of each (op, soc, case, part, source), the grouping the index serves;
    grouping across socs in SQL made SQLite scan and join the whole table.
    """
    ids = _newest_ids(
        Baseline,
        (Baseline.op, Baseline.soc, Baseline.case_name, Baseline.part, Baseline.source),
        Baseline.measured_at,
        Baseline.source == "upstream",
        Baseline.backend == BackendKind.CUDA,
        *filters(Baseline, op=op, soc=settings().gpu_soc),
    )
    query = select(Baseline).where(Baseline.id.in_(ids))
    newest: dict[tuple[str, str, str], Baseline] = {}
    for row in session.scalars(query.options(defer(Baseline.samples), defer(Baseline.environment))):
        key = (row.op, row.case_name, row.part)
        if key not in newest or (row.measured_at, row.id) > (
            newest[key].measured_at,
            newest[key].id,
        ):
            newest[key] = row
    return list(newest.values())


def checks_query(op: str | None, soc: str | None, only_regressed: bool) -> Select:
    """The newest check of each (op, soc, case, part), regressions first."""
    ids = _newest_ids(
        CheckVerdict,
        (CheckVerdict.op, CheckVerdict.soc, CheckVerdict.case_name, CheckVerdict.part),
        CheckVerdict.checked_at,
        *filters(CheckVerdict, op=op, soc=soc),
    )
    query = select(CheckVerdict).where(CheckVerdict.id.in_(ids))
    if only_regressed:
        query = query.where(CheckVerdict.regressed.is_(True))
    return query.options(defer(CheckVerdict.environment)).order_by(
        CheckVerdict.regressed.desc(),
        (CheckVerdict.outcome == "contended").desc(),
        CheckVerdict.op,
        CheckVerdict.soc,
        CheckVerdict.case_name,
        CheckVerdict.part,
    )


def accuracy_query(
    op: str | None,
    soc: str | None,
    case: str | None,
    passed: bool | None,
    latest: bool,
) -> Select:
    """Verify's verdicts, newest first; `latest`: only the newest of each (op, soc, case, output)."""
    where = [*filters(AccuracyResult, op=op, soc=soc, case_name=case)]
    query = select(AccuracyResult)
    if latest:
        group = (AccuracyResult.op, AccuracyResult.soc, AccuracyResult.case_name,
                 AccuracyResult.output)  # fmt: skip
        ids = _newest_ids(AccuracyResult, group, AccuracyResult.verified_at, *where)
        query = query.where(AccuracyResult.id.in_(ids))
    else:
        query = query.where(*where)
    if passed is not None:
        query = query.where(AccuracyResult.passed.is_(passed))
    return query.order_by(AccuracyResult.verified_at.desc(), AccuracyResult.id.desc())


def ceilings(session: Session) -> dict[str, DeviceCeiling]:
    """The newest measured ceilings of each soc."""
    ids = _newest_ids(DeviceCeiling, (DeviceCeiling.soc,), DeviceCeiling.measured_at)
    return {
        c.soc: c for c in session.scalars(select(DeviceCeiling).where(DeviceCeiling.id.in_(ids)))
    }
