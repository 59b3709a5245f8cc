"""Dependencies of the routes: the database, a session, Optuna's storage, paging, filters, auth."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from fastapi import Depends, HTTPException, Query, Request, status
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from optuna.storages import RDBStorage
from sqlalchemy.orm import Session

from autotuner.settings import settings
from storage import Database

MAX_LIMIT = 1000
#: Far beyond any real list, and within every database's integer range.
MAX_OFFSET = 2**31 - 1
#: Op, soc and source names: letters, digits, `_`, `.` and `-`.
NAME_PATTERN = r"^[A-Za-z0-9_.\-]+$"


def get_db(request: Request) -> Database:
    return request.app.state.db


DatabaseDep = Annotated[Database, Depends(get_db)]


def get_session(db: DatabaseDep) -> Iterator[Session]:
    with db.sessions() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


def get_optuna(request: Request) -> RDBStorage:
    return request.app.state.optuna


OptunaDep = Annotated[RDBStorage, Depends(get_optuna)]


def get_checkout(request: Request) -> Path | None:
    """The checkout whose frozen results the pages show beside the database's (None: none)."""
    return request.app.state.checkout


CheckoutDep = Annotated[Path | None, Depends(get_checkout)]


@dataclass(frozen=True)
class Paging:
    limit: int
    offset: int


def paging(
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Items per page.")] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Items to skip.")] = 0,
) -> Paging:
    return Paging(limit, offset)


PagingDep = Annotated[Paging, Depends(paging)]

OpFilter = Annotated[str | None, Query(max_length=128, pattern=NAME_PATTERN, description="Op.")]
SocFilter = Annotated[str | None, Query(max_length=64, pattern=NAME_PATTERN, description="Soc.")]

bearer = HTTPBearer(auto_error=False, description="AUTOTUNE_API_TOKEN of the server.")


def require_token(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> None:
    """Writing needs `Authorization: Bearer <AUTOTUNE_API_TOKEN>`; without that setting, 403."""
    token = settings().api_token
    if not token:
        raise HTTPException(status.HTTP_403_FORBIDDEN, "writing is disabled")
    given = credentials.credentials if credentials else ""
    if not secrets.compare_digest(given.encode(), token.encode()):
        raise HTTPException(
            status.HTTP_401_UNAUTHORIZED,
            "a valid bearer token is required",
            headers={"WWW-Authenticate": "Bearer"},
        )
