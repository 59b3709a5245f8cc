"""`verify --references URL`: upstream's outputs of each case asked from a reference server and
written as a reference set, which verify then reads as it reads a saved one (so every case's
inputs' hash and files are checked the same way, and a server that cannot answer stops the verify
before any verdict is written).

The standard library's HTTP client only (the runtime has no other): a dropped connection, a
timeout or a busy server (429, 503) is retried `AUTOTUNE_REFERENCE_ATTEMPTS` times with a growing
pause; a server that stays unreachable, and any refusal, is one line naming the case.
"""

from __future__ import annotations

import base64
import binascii
import http.client
import json
import os
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.errors import UserError
from ops.spec import Case, OpSpec

from ..settings import settings
from .store import Entry, write_set
from .wire import Answer, one_line

#: Answers worth asking again: the server is busy or a proxy in front of it is.
_RETRY_STATUS = {429, 502, 503, 504}
#: Seconds before the second attempt; doubled for each one after.
_FIRST_PAUSE_S = 0.5


def query_of(spec: OpSpec, case: Case) -> dict[str, Any]:
    """The request for a case: a built-in case by name; any other by its shape, dtype and offsets
    (its lengths as offsets where it was not given offsets)."""
    builtin = {c.name for kind in ("accuracy", "performance") for c in spec.cases(kind)}  # type: ignore[arg-type]
    if case.kind != "user" and case.name in builtin:
        return {"op": spec.name, "case": case.name}
    query: dict[str, Any] = {"op": spec.name, "shape": case.shape, "dtype": case.dtype}
    if case.offsets is not None:
        query["offsets"] = list(case.offsets)
    elif spec.jagged:
        query["offsets"] = [sum(case.lengths[:i]) for i in range(len(case.lengths) + 1)]
    return query


def _detail(body: bytes) -> str:
    """The one line of a refusal's `detail`, or the body's first line."""
    try:
        detail = json.loads(body).get("detail")
    except (ValueError, AttributeError):
        detail = None
    text = detail if isinstance(detail, str) else body.decode("utf-8", "replace")
    return (text.strip().splitlines() or ["(no detail)"])[0]


def ask(url: str, spec: OpSpec, case: Case) -> tuple[Entry, dict[str, bytes]]:
    """The server's entry and files for one case."""
    config = settings()
    request = urllib.request.Request(
        url.rstrip("/") + "/references",
        data=json.dumps(query_of(spec, case)).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Bearer {config.reference_token}"} if config.reference_token else {}),
        method="POST",
    )
    what = f"{spec.name} {case.name}"
    pause = _FIRST_PAUSE_S
    for attempt in range(1, config.reference_attempts + 1):
        last = attempt == config.reference_attempts
        try:
            with urllib.request.urlopen(request, timeout=config.reference_timeout_s) as response:
                body = response.read()
            break
        except urllib.error.HTTPError as exc:
            if exc.code not in _RETRY_STATUS or last:
                raise UserError(
                    f"{what}: the reference server at {url} refused ({exc.code}): "
                    f"{_detail(exc.read())}"
                ) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            if last:
                reason = getattr(exc, "reason", None) or exc
                raise UserError(
                    f"{what}: cannot reach the reference server at {url} ({reason}; "
                    f"{attempt} attempts)"
                ) from None
        time.sleep(pause)
        pause *= 2
    try:
        answer = Answer.model_validate_json(body)
        files = {name: base64.b64decode(text, validate=True) for name, text in answer.files.items()}
    except (ValidationError, binascii.Error, ValueError) as exc:
        line = one_line(exc) if isinstance(exc, ValidationError) else str(exc)
        raise UserError(f"{what}: the reference server's answer is malformed: {line}") from None
    # The server names the case as it made it; here it is the case asked for, and the inputs'
    # hash says whether the two are the same.
    entry = answer.entry.model_copy(update={"case": case.name, "served_by": url})
    return entry, files


def fetch_set(url: str, todo: list[tuple[OpSpec, Case]], root: Path) -> None:
    """Ask the server for every case of `todo` and write the answers as a set in `root`."""
    if not url.startswith(("http://", "https://")):
        raise UserError(f"--references {url}: a URL starts with http:// or https://")
    os.makedirs(root, exist_ok=True)
    write_set(root, [ask(url, spec, case) for spec, case in todo])
