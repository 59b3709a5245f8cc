"""The dashboard: server-rendered pages (their tables need no JavaScript; the charts do)."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, HTTPException, Request, status
from fastapi.responses import HTMLResponse
from fastapi.templating import Jinja2Templates
from sqlalchemy import select

from autotuner.freeze.history import history_rows
from storage import AccuracyResult, StudyRecord

from .. import newest, trials
from ..cases import case_rows
from ..catalog import known_ops
from ..deps import CheckoutDep, DatabaseDep, OptunaDep, SessionDep
from ..formatting import FILTERS
from ..plots import overview_chart, study_plots
from ..schemas import AccuracyOut, CheckOut, StudyOut

templates = Jinja2Templates(directory=Path(__file__).parent.parent / "templates")
templates.env.filters.update(FILTERS)

router = APIRouter(include_in_schema=False, default_response_class=HTMLResponse)


@router.get("/")
def overview(request: Request, session: SessionDep, root: CheckoutDep) -> HTMLResponse:
    """Every op x case x soc: frozen time, GPU baseline, ratio, speedup, roofline, last check,
    accuracy; a chart of the speedups and ratios per op."""
    rows = case_rows(session, root)
    context = {"rows": rows, "ops": known_ops(session, root), "chart": overview_chart(rows)}
    return templates.TemplateResponse(request, "overview.html", context)


@router.get("/ops/{op}")
def op_page(
    request: Request,
    op: str,
    db: DatabaseDep,
    session: SessionDep,
    storage: OptunaDep,
    root: CheckoutDep,
) -> HTMLResponse:
    """An op: its frozen table, its history across labels, and the charts of each study."""
    found = next((o for o in known_ops(session, root) if o.name == op), None)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"unknown op {op!r}")
    query = select(StudyRecord).where(StudyRecord.op == op)
    records = session.scalars(
        query.order_by(StudyRecord.kernel, StudyRecord.case_name, StudyRecord.soc)
    )
    studies = [StudyOut.model_validate(r) for r in records]
    counts = trials.state_counts(session, [s.name for s in studies])
    outcomes = {}
    for study in studies:
        study.trials = counts[study.name]
        optuna_id = trials.study_id(session, study.name)
        outcomes[study.id] = trials.outcome_counts(session, optuna_id) if optuna_id else {}
    context = {
        "op": found,
        "rows": case_rows(session, root, op),
        "history": history_rows(db, op, None),
        "studies": studies,
        "outcomes": outcomes,
        "plots": {
            s.id: study_plots(storage, s.name, sum(s.trials.values()), s.interpreter)
            for s in studies
        },
    }
    return templates.TemplateResponse(request, "op.html", context)


@router.get("/regressions")
def regressions(request: Request, session: SessionDep) -> HTMLResponse:
    """The newest check of each (op, soc, case, part), regressions first; beside them the outputs
    whose newest verdict failed."""
    query = newest.checks_query(None, None, only_regressed=False)
    checks = [CheckOut.model_validate(c) for c in session.scalars(query)]
    failed = newest.accuracy_query(None, None, None, passed=False, latest=True)
    failures = [AccuracyOut.model_validate(a) for a in session.scalars(failed)]
    context = {
        "checks": checks,
        "regressed": sum(c.regressed for c in checks),
        "contended": sum(c.outcome == "contended" for c in checks),
        "failures": failures,
        "verified": session.scalar(select(AccuracyResult.id).limit(1)) is not None,
    }
    return templates.TemplateResponse(request, "regressions.html", context)
