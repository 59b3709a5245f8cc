"""`autotune serve --optuna-dashboard PORT` starts optuna-dashboard on the same database as a
second process, and the study pages link to it."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.dashboard_seed import STUDY_CPU, STUDY_MAIN, seed

from .conftest import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("optuna_dashboard") is None,
    reason="optuna-dashboard is not installed (the optuna-dashboard extra)",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, deadline: float) -> str:
    """The body at `url`, retried until the server answers or the deadline passes."""
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def test_serve_starts_optuna_dashboard_on_the_same_database(any_db):
    seeded = seed(any_db)
    ours, theirs = _free_port(), _free_port()
    args = ["serve", "--db", seeded.url, "--port", str(ours), "--optuna-dashboard", str(theirs)]
    server = subprocess.Popen(
        [sys.executable, "-m", "autotuner", *args], cwd=ROOT, start_new_session=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        listed = json.loads(_get(f"http://127.0.0.1:{theirs}/api/studies", deadline))
        names = {s["study_name"] for s in listed["study_summaries"]}
        assert names == {STUDY_MAIN, STUDY_CPU}
        page = _get(f"http://127.0.0.1:{ours}/studies/{seeded.study_ids[STUDY_MAIN]}", deadline)
        optuna_id = next(s["study_id"] for s in listed["study_summaries"]
                         if s["study_name"] == STUDY_MAIN)  # fmt: skip
        link = f"http://127.0.0.1:{theirs}/dashboard/studies/{optuna_id}"
        assert f'href="{link}"' in page
        _get(link, deadline)  # its page of that study answers
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
