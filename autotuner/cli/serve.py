"""`autotune serve`: the dashboard and JSON API (the one command that imports `api`)."""

from __future__ import annotations

from typing import Annotated

import typer

from .common import DbOption


def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
) -> None:
    """The dashboard and JSON API (read-only unless AUTOTUNE_API_TOKEN is set)."""
    import uvicorn

    from api.main import create_app

    uvicorn.run(create_app(db), host=host, port=port, log_level="info")
