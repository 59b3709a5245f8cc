"""JSON API over verify's verdicts: one row per output of a case."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from .. import newest, paging
from ..deps import NAME_PATTERN, OpFilter, PagingDep, SessionDep, SocFilter
from ..schemas import AccuracyOut, Page

router = APIRouter(tags=["accuracy"])

CaseFilter = Annotated[
    str | None, Query(max_length=256, pattern=NAME_PATTERN, description="Case name.")
]


@router.get("/accuracy")
def list_accuracy(
    session: SessionDep,
    page: PagingDep,
    op: OpFilter = None,
    soc: SocFilter = None,
    case: CaseFilter = None,
    passed: Annotated[bool | None, Query(description="Only passed (true) or failed.")] = None,
    latest: Annotated[
        bool, Query(description="Only the newest verdict of each (op, soc, case, output).")
    ] = False,
) -> Page[AccuracyOut]:
    """Verify's verdicts, newest first (`interpreter` ones ran in the Triton interpreter)."""
    query = newest.accuracy_query(op, soc, case, passed, latest)
    return paging.fetch(session, query, page, AccuracyOut)
