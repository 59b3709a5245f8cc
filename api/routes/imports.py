"""The one writing endpoint: import an export document (needs the API token)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError

from autotuner.errors import UserError

from ..deps import DatabaseDep, require_token
from ..schemas import ImportResult, Message

router = APIRouter(tags=["import"])


@router.post(
    "/import",
    dependencies=[Depends(require_token)],
    responses={
        400: {"model": Message, "description": "The body is not JSON."},
        401: {"model": Message, "description": "Missing or wrong bearer token."},
        403: {"model": Message, "description": "Writing is disabled (no AUTOTUNE_API_TOKEN)."},
    },
)
def import_export(
    db: DatabaseDep,
    document: Annotated[dict[str, Any], Body(description="The JSON export document.")],
) -> ImportResult:
    """Import an export document into the database; a malformed one is answered with 422."""
    from autotuner.transfer import import_document  # written beside this service

    try:
        summary = import_document(db, document)
    except UserError as exc:
        raise RequestValidationError(
            [{"loc": ("body",), "msg": str(exc), "type": "value_error"}]
        ) from None
    return ImportResult(summary=jsonable_encoder(summary))
