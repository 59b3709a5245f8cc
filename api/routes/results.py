"""JSON API over the results: ops, the per-case overview, baselines, frozen versions, checks."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from sqlalchemy import select
from sqlalchemy.orm import defer

from storage import Baseline, FrozenVersion

from .. import newest, paging
from ..cases import case_rows
from ..catalog import known_ops
from ..deps import NAME_PATTERN, CheckoutDep, OpFilter, PagingDep, SessionDep, SocFilter
from ..schemas import BaselineOut, CaseOut, CheckOut, FrozenVersionOut, OpOut, Page

router = APIRouter(tags=["results"])


@router.get("/ops")
def list_ops(session: SessionDep, root: CheckoutDep) -> list[OpOut]:
    """The ops of `ops` and those found only in the database, with the socs they have data on."""
    return known_ops(session, root)


@router.get("/cases")
def list_cases(
    session: SessionDep,
    root: CheckoutDep,
    page: PagingDep,
    op: OpFilter = None,
    soc: SocFilter = None,
) -> Page[CaseOut]:
    """Per (op, soc, case, part): frozen time, GPU baseline, ratio, newest baselines and check;
    `source` says whether the frozen entry is the database's or the checkout's."""
    return paging.cut(case_rows(session, root, op, soc), page)


@router.get("/baselines")
def list_baselines(
    session: SessionDep,
    page: PagingDep,
    op: OpFilter = None,
    soc: SocFilter = None,
    source: Annotated[
        str | None, Query(max_length=32, pattern=NAME_PATTERN, description="Source.")
    ] = None,
) -> Page[BaselineOut]:
    """Every baseline, newest first (`interpreter` ones are interpreter times)."""
    query = (
        select(Baseline)
        .options(defer(Baseline.samples), defer(Baseline.environment))
        .where(*paging.filters(Baseline, op=op, soc=soc, source=source))
        .order_by(Baseline.measured_at.desc(), Baseline.id.desc())
    )
    return paging.fetch(session, query, page, BaselineOut)


@router.get("/frozen-versions")
def list_frozen_versions(
    session: SessionDep, page: PagingDep, op: OpFilter = None, soc: SocFilter = None
) -> Page[FrozenVersionOut]:
    """Frozen versions, newest first."""
    query = (
        select(FrozenVersion)
        .where(*paging.filters(FrozenVersion, op=op, soc=soc))
        .order_by(FrozenVersion.id.desc())
    )
    return paging.fetch(session, query, page, FrozenVersionOut)


@router.get("/regressions")
def list_regressions(
    session: SessionDep,
    page: PagingDep,
    op: OpFilter = None,
    soc: SocFilter = None,
    only_regressed: bool = True,
) -> Page[CheckOut]:
    """The newest check of each (op, soc, case, part); only regressions unless told otherwise."""
    return paging.fetch(session, newest.checks_query(op, soc, only_regressed), page, CheckOut)
