"""JSON API over the studies and their Optuna trials."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, Query, status
from sqlalchemy import select

from storage import StudyRecord

from .. import paging, trials
from ..deps import OpFilter, PagingDep, SessionDep, SocFilter
from ..schemas import Message, Page, StudyOut, TrialOut

router = APIRouter(tags=["studies"])

StudyId = Annotated[int, Path(ge=1, le=2**31 - 1, description="Id of a study record.")]
StateFilter = Annotated[
    str | None,
    Query(pattern="^(COMPLETE|FAIL|RUNNING|PRUNED|WAITING)?$", description="Only this state."),
]
CategoryFilter = Annotated[
    str | None,
    Query(
        max_length=64, pattern=r"^[A-Za-z0-9_.\-]*$", description="Only failures of this category."
    ),
]
SortOrder = Annotated[
    str, Query(pattern=f"^({'|'.join(trials.SORTS)})$", description="Sort by number, value, state.")
]


@router.get("/studies")
def list_studies(
    session: SessionDep, page: PagingDep, op: OpFilter = None, soc: SocFilter = None
) -> Page[StudyOut]:
    """Our study records (op, kernel, case, soc, verdict) with their trials counted by state."""
    query = (
        select(StudyRecord)
        .where(*paging.filters(StudyRecord, op=op, soc=soc))
        .order_by(
            StudyRecord.op,
            StudyRecord.kernel,
            StudyRecord.case_name,
            StudyRecord.soc,
            StudyRecord.id,
        )
    )
    found = paging.fetch(session, query, page, StudyOut)
    counts = trials.state_counts(session, [study.name for study in found.items])
    for study in found.items:
        study.trials = counts[study.name]
    return found


@router.get("/studies/{study_id}/trials", responses={404: {"model": Message}})
def list_trials(
    session: SessionDep,
    page: PagingDep,
    study_id: StudyId,
    state: StateFilter = None,
    category: CategoryFilter = None,
    sort: SortOrder = "number",
) -> Page[TrialOut]:
    """The study's Optuna trials (of a state, failed with a category), by number or as sorted:
    state, value, config, times, error and failure reason."""
    record = session.get(StudyRecord, study_id)
    if record is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no study with id {study_id}")
    optuna_id = trials.study_id(session, record.name)
    if optuna_id is None:  # recorded, but its Optuna study is gone
        return paging.cut([], page)
    return Page(
        items=trials.page(session, optuna_id, page.limit, page.offset, state, category, sort),
        total=trials.count(session, optuna_id, state, category),
        limit=page.limit,
        offset=page.offset,
    )
