"""The one writing endpoint: import an export document (needs the API token).

The token is checked before the body is read, and the body is read in chunks up to
`AUTOTUNE_IMPORT_MAX_BYTES`: an anonymous client cannot make the server hold a large upload.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError

from autotuner.freeze import import_check
from autotuner.request_body import read_body
from autotuner.settings import settings
from core.errors import UserError

from ..deps import DatabaseDep, require_token
from ..schemas import ImportResult, Message

router = APIRouter(tags=["import"])

#: The body as OpenAPI describes it (read by hand, so FastAPI does not parse it first).
_BODY = {
    "required": True,
    "description": "The JSON export document (`autotune export`).",
    "content": {"application/json": {"schema": {"type": "object"}}},
}


def _parse(body: bytes) -> Any:
    try:
        return json.loads(body)  # UTF-8, -16 or -32, as RFC 8259 allows
    except UnicodeDecodeError:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "the body is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, f"the body is not JSON: {exc}") from None
    except RecursionError:
        raise HTTPException(status.HTTP_400_BAD_REQUEST, "the body nests too deeply") from None


@router.post(
    "/import",
    dependencies=[Depends(require_token)],
    openapi_extra={"requestBody": _BODY},
    responses={
        400: {"model": Message, "description": "The body is not UTF-8 JSON."},
        401: {"model": Message, "description": "Missing or wrong bearer token."},
        403: {"model": Message, "description": "Writing is disabled (no AUTOTUNE_API_TOKEN)."},
        413: {"model": Message, "description": "The body exceeds AUTOTUNE_IMPORT_MAX_BYTES."},
        422: {"description": "Not an export document, or a row this checkout does not know."},
    },
)
async def import_export(request: Request, db: DatabaseDep) -> ImportResult:
    """Import an export document into the database; a malformed one, or one with a row this
    checkout does not know, is answered with 422 naming the first bad row."""
    document = _parse(await read_body(request, settings().import_max_bytes, "body"))
    if not isinstance(document, dict):
        raise RequestValidationError(
            [{"loc": ("body",), "msg": "an export document is a JSON object", "type": "dict_type"}]
        )
    try:
        summary = await run_in_threadpool(import_check.import_export, db, document)
    except UserError as exc:
        raise RequestValidationError(
            [{"loc": ("body",), "msg": str(exc), "type": "value_error"}]
        ) from None
    return ImportResult(summary=jsonable_encoder(summary))
