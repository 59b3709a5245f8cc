"""An HTTP request's body read up to a bound, for the services that take one (the dashboard's
import, the reference server): 413 as soon as the body is known to be larger."""

from __future__ import annotations

from fastapi import HTTPException, Request, status


async def read_body(request: Request, limit: int, what: str = "request") -> bytes:
    """The body, or 413 ("the `what` exceeds the `limit` bytes allowed") as soon as its declared
    length or the bytes read so far exceed `limit`."""
    too_large = HTTPException(
        status.HTTP_413_CONTENT_TOO_LARGE, f"the {what} exceeds the {limit} bytes allowed"
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise too_large
    return bytes(body)
