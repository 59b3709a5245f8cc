"""`autotune reference-server`: upstream's outputs of a case, run on this machine's device, for a
verify on another machine (`verify --references URL`); the migration RFC's GPU accuracy server.

A request names a case, never code: an op and a built-in case's name, or a user case's shape,
dtype and offsets. The answer is the case's reference-set entry (`store.Entry`) and its `.npy`
files in base64, which the client checks as it checks a saved set. Bounds: the request's bytes
(`AUTOTUNE_REFERENCE_MAX_REQUEST_BYTES`, 413), the answer's (`..._MAX_OUTPUT_BYTES`, 422), the
requests held at once (`..._MAX_REQUESTS`, 429; one runs upstream at a time, the device's own
order). `AUTOTUNE_REFERENCE_TOKEN`, where set, is required as a bearer token (401). Every refusal
is a 4xx whose `detail` is one line.
"""

from __future__ import annotations

import base64
import secrets
import threading
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request, status
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import ValidationError

from core.errors import UserError

from ..backends import Backend
from ..request_body import read_body
from ..settings import settings
from .store import capture, inputs_sha256
from .wire import Answer, CaseQuery, one_line


def outputs_of(query: CaseQuery, backend: Backend) -> Answer:
    """Run upstream on the case; UserError or ValueError (one line) where it cannot."""
    from ops import get_op

    spec = get_op(query.op)
    if query.case is not None:
        case = spec.case(query.case)
    else:
        case = spec.case_from_shape(dict(query.shape or {}), query.dtype or "", query.offsets)
    inputs = spec.make_inputs(case, backend.device)
    outputs = spec.run_upstream(inputs, case)
    backend.synchronize()
    entry, files = capture(spec, case, inputs_sha256(inputs), outputs, backend)
    size, limit = sum(map(len, files.values())), settings().reference_max_output_bytes
    if size > limit:
        raise ValueError(
            f"{spec.name} {case.name}: upstream's outputs are {size} bytes, over the {limit} this "
            "server sends (AUTOTUNE_REFERENCE_MAX_OUTPUT_BYTES)"
        )
    return Answer(entry=entry, files={k: base64.b64encode(v).decode() for k, v in files.items()})


bearer = HTTPBearer(auto_error=False, description="AUTOTUNE_REFERENCE_TOKEN of the server.")


def require_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    token = settings().reference_token
    given = credentials.credentials if credentials else ""
    if token and not secrets.compare_digest(given.encode(), token.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "a valid bearer token (AUTOTUNE_REFERENCE_TOKEN) is required",
            headers={"WWW-Authenticate": "Bearer"},
        )


def create_app(backend: Backend) -> FastAPI:
    """The server of upstream's outputs on `backend`'s device."""
    app = FastAPI(title="autotune reference server", version="1")
    held = threading.BoundedSemaphore(settings().reference_max_requests)
    device = threading.Lock()

    def run(query: CaseQuery) -> Answer:
        with device:
            return outputs_of(query, backend)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": one_line(exc)}, status.HTTP_422_UNPROCESSABLE_CONTENT)

    @app.get("/")
    def about() -> dict[str, Any]:
        """What this server runs upstream on."""
        return {
            "soc": backend.soc,
            "device": backend.device_name,
            "interpreter": backend.is_interpreter,
        }

    @app.post(
        "/references",
        dependencies=[Depends(require_token)],
        openapi_extra={"requestBody": {"content": {"application/json": {
            "schema": CaseQuery.model_json_schema()}}}},
    )  # fmt: skip
    async def references(request: Request) -> Answer:
        """Upstream's outputs of one case, with the entry that describes them."""
        body = await read_body(request, settings().reference_max_request_bytes)
        try:
            query = CaseQuery.model_validate_json(body)
        except ValidationError as exc:
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, one_line(exc)) from None
        if not held.acquire(blocking=False):
            raise HTTPException(
                status.HTTP_429_TOO_MANY_REQUESTS,
                f"busy: {settings().reference_max_requests} requests held; retry",
                headers={"Retry-After": "1"},
            )
        try:
            return await run_in_threadpool(run, query)
        except (UserError, ValueError) as exc:
            line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, line) from None
        finally:
            held.release()

    return app
