"""`autotune serve`: the dashboard and JSON API (the one command that imports `api`), and on
request optuna-dashboard beside it, as a second process over the same database."""

from __future__ import annotations

import importlib.util
import signal
import socket
import subprocess
import sys
from typing import Annotated

import typer

from core.errors import UserError

from .common import DbOption, console

#: optuna-dashboard's own server (its URL prefix is fixed when it is built, so it takes a port
#: of its own), through its public `run_server`.
OPTUNA_DASHBOARD = "import sys, optuna_dashboard; " \
    "optuna_dashboard.run_server(sys.argv[1], host=sys.argv[2], port=int(sys.argv[3]))"  # fmt: skip


def start_optuna_dashboard(url: str, host: str, port: int) -> subprocess.Popen:
    """optuna-dashboard over the database `url` on host:port, as a child process."""
    if importlib.util.find_spec("optuna_dashboard") is None:
        raise UserError(
            "--optuna-dashboard needs optuna-dashboard: pip install 'autotune[optuna-dashboard]'"
        )
    return subprocess.Popen([sys.executable, "-c", OPTUNA_DASHBOARD, url, host, str(port)])


def port_taken(host: str, port: int) -> bool:
    """Whether another process listens on host:port (a bind as uvicorn's fails there)."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    optuna_dashboard: Annotated[
        int | None,
        typer.Option(
            "--optuna-dashboard",
            min=1,
            max=65535,
            help="Also start optuna-dashboard (the optuna-dashboard extra) on this port over the "
            "same database; each study page links to it.",
        ),
    ] = None,
) -> None:
    """The dashboard and JSON API (read-only unless AUTOTUNE_API_TOKEN is set)."""
    import uvicorn

    from api.main import create_app
    from autotuner.settings import settings

    url = db or settings().db
    if optuna_dashboard == port:
        raise UserError(
            f"--optuna-dashboard {optuna_dashboard} is --port too: give it a port of its own"
        )
    for flag, taken in (("--port", port), ("--optuna-dashboard", optuna_dashboard)):
        if taken and port_taken(host, taken):
            raise UserError(
                f"port {taken} on {host} is taken by another process: give {flag} another port"
            )
    app = create_app(
        url, optuna_dashboard=f"http://{host}:{optuna_dashboard}" if optuna_dashboard else None
    )
    child = start_optuna_dashboard(url, host, optuna_dashboard) if optuna_dashboard else None
    if child:
        console.print(
            f"optuna-dashboard on http://{host}:{optuna_dashboard}", markup=False, highlight=False
        )
    # uvicorn answers SIGTERM by shutting down, then raises it again under the handler it found:
    # this one, so that the child is stopped below instead of left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    try:
        uvicorn.run(app, host=host, port=port, log_level="info")
    finally:
        if child:
            child.terminate()
            child.wait(10)
