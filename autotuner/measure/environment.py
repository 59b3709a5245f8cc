"""The environment a number was produced in: versions, device, driver, project commit."""

from __future__ import annotations

import platform
import socket
import subprocess
from importlib import metadata
from typing import Any

from core.errors import UserError
from core.paths import project_root
from core.upstream import RECSYS_EXAMPLES

from ..backends import Backend
from ..settings import settings


def project_commit() -> str:
    """`<sha>` of the checkout, with `-dirty` if tracked files differ; "unknown" outside git.

    `AUTOTUNE_PROJECT_COMMIT` (`Settings.project_commit`) names it where the tree was copied
    without its .git (a device run).
    """
    given = settings().project_commit
    if given:
        return given
    try:
        root = project_root()
    except UserError:
        return "unknown"
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def environment(backend: Backend) -> dict[str, Any]:
    return {
        "soc": backend.soc,
        "device": backend.device_name,
        "backend": backend.kind,
        "interpreter": backend.is_interpreter,
        **backend.versions(),
        "python": platform.python_version(),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "autotune": _version("autotune"),
        "optuna": _version("optuna"),
        "fbgemm-gpu-cpu": _version("fbgemm-gpu-cpu"),
        # The checkout's files are checked against the pin as they load; None: no checkout here.
        "recsys-examples": None if RECSYS_EXAMPLES.missing() else RECSYS_EXAMPLES.commit,
        "project_commit": project_commit(),
    }


def run_header(backend: Backend, smoke: bool) -> dict[str, Any]:
    """The first line of a benchmark's JSONL output: date, environment and command; a smoke run
    on the interpreter says that its times are no performance numbers."""
    import datetime
    import sys

    header: dict[str, Any] = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "environment": environment(backend),
        "command": " ".join(sys.argv),
    }
    if smoke:
        header["smoke"] = "interpreter run: checks the script only, the times are not performance"
    return header
