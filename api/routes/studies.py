"""JSON API over the studies and their Optuna trials."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, HTTPException, Path, status
from sqlalchemy import select

from storage import StudyRecord

from .. import paging, trials
from ..deps import OpFilter, PagingDep, SessionDep, SocFilter
from ..schemas import Message, Page, StudyOut, TrialOut

router = APIRouter(tags=["studies"])


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
    study_id: Annotated[int, Path(ge=1, le=2**31 - 1, description="Id of a study record.")],
) -> Page[TrialOut]:
    """The study's Optuna trials by number: state, value, config and failure reason."""
    record = session.get(StudyRecord, study_id)
    if record is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no study with id {study_id}")
    optuna_id = trials.study_id(session, record.name)
    if optuna_id is None:  # recorded, but its Optuna study is gone
        return paging.cut([], page)
    return Page(
        items=trials.page(session, optuna_id, page.limit, page.offset),
        total=trials.count(session, optuna_id),
        limit=page.limit,
        offset=page.offset,
    )
