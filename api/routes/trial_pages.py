"""The trial view of a study: a table (sorted, filtered by state and category with plain links
and a GET form, no JavaScript needed), the parallel coordinates of its trials, and one trial's
detail with the compiler's verdict on its config where there is one."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import HTMLResponse
from sqlalchemy import select

from core.socs import CPU
from storage import CompileRecord, StudyRecord

from .. import trials
from ..deps import PagingDep, SessionDep
from ..plots import MAX_CHARTED_TRIALS, parallel_coordinates
from ..schemas import StudyOut
from .pages import templates
from .studies import CategoryFilter, SortOrder, StateFilter, StudyId

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)
#: Seconds between reloads of a page whose study has running trials.
REFRESH_S = 10


def _study(session, study_id: int) -> tuple[StudyOut, int | None]:
    record = session.get(StudyRecord, study_id)
    if record is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no study with id {study_id}")
    study = StudyOut.model_validate(record)
    optuna_id = trials.study_id(session, record.name)
    if optuna_id is not None:
        study.trials = trials.state_counts(session, [record.name])[record.name]
    return study, optuna_id


def _context(request: Request, study: StudyOut, optuna_id: int | None) -> dict:
    dashboard = request.app.state.optuna_dashboard
    return {
        "study": study,
        "interpreter": study.soc == CPU,
        "refresh": REFRESH_S if study.trials.get("RUNNING") else None,
        "optuna_dashboard": (
            f"{dashboard.rstrip('/')}/dashboard/studies/{optuna_id}"
            if dashboard and optuna_id is not None
            else None
        ),
    }


@router.get("/studies/{study_id}")
def study_page(
    request: Request,
    session: SessionDep,
    paging: PagingDep,
    study_id: StudyId,
    state: StateFilter = None,
    category: CategoryFilter = None,
    sort: SortOrder = "number",
) -> HTMLResponse:
    """A study's trials: outcome counts, the table, the parallel coordinates of completed ones."""
    study, optuna_id = _study(session, study_id)
    rows, total, outcomes, found, chart = [], 0, {}, [], None
    if optuna_id is not None:
        rows = trials.page(session, optuna_id, paging.limit, paging.offset, state, category, sort)
        total = trials.count(session, optuna_id, state, category)
        outcomes = trials.outcome_counts(session, optuna_id)
        found = trials.categories(session, optuna_id)
        complete = trials.page(session, optuna_id, MAX_CHARTED_TRIALS, 0, "COMPLETE")
        chart = parallel_coordinates(complete, study.soc == CPU)
    tunables = list(dict.fromkeys(k for r in rows for k in (r.config or {})))
    context = {
        **_context(request, study, optuna_id),
        "rows": rows,
        "total": total,
        "outcomes": outcomes,
        "categories": found,
        "tunables": tunables,
        "chart": chart,
        "filters": {"state": state or "", "category": category or "", "sort": sort},
        "paging": paging,
    }
    return templates.TemplateResponse(request, "trials.html", context)


@router.get("/studies/{study_id}/trials/{number}")
def trial_page(
    request: Request, session: SessionDep, study_id: StudyId, number: int
) -> HTMLResponse:
    """One trial: its config, times, error, why it failed, and the compiler's verdict."""
    study, optuna_id = _study(session, study_id)
    found = trials.trial(session, optuna_id, number) if optuna_id is not None else None
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"study {study_id} has no trial {number}")
    query = select(CompileRecord).where(
        CompileRecord.op == study.op,
        CompileRecord.kernel == study.kernel,
        CompileRecord.soc == study.soc,
    )
    compiles = [c for c in session.scalars(query) if c.config == found.config]
    context = {**_context(request, study, optuna_id), "trial": found, "compiles": compiles}
    return templates.TemplateResponse(request, "trial.html", context)
