"""The application: the database opened once, the JSON API under /api, the pages at /."""

from __future__ import annotations

from fastapi import FastAPI

from autotuner.report.frozen import checkout
from autotuner.settings import settings
from storage import open_database, optuna_storage

from .routes import accuracy, imports, pages, results, static, studies, trial_pages


def create_app(
    db_url: str | None = None, repository: bool = True, optuna_dashboard: str | None = None
) -> FastAPI:
    """The service over `db_url` (default: AUTOTUNE_DB); UserError if it cannot be opened.

    `repository`: also show the frozen results of the checkout the service runs in (its
    performance json files), under the database's own. `optuna_dashboard`: the URL of an
    optuna-dashboard on the same database, linked from each study (default:
    AUTOTUNE_OPTUNA_DASHBOARD_URL).
    """
    db = open_database(db_url or settings().db)
    app = FastAPI(
        title="autotune",
        summary="Frozen Triton launch configs, their baselines, checks, accuracy and studies.",
        version="1",
        docs_url=None,  # the interactive docs load their scripts from a CDN
        redoc_url=None,
    )
    app.state.db = db
    app.state.optuna = optuna_storage(db)
    app.state.checkout = checkout() if repository else None
    app.state.optuna_dashboard = optuna_dashboard or settings().optuna_dashboard_url
    for router in (results.router, accuracy.router, studies.router, imports.router):
        app.include_router(router, prefix="/api")
    app.include_router(pages.router)
    app.include_router(trial_pages.router)
    app.include_router(static.router)
    return app
