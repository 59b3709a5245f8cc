"""Pages of lists: a query's rows in SQL, or a list already built; the filters of list queries."""

from __future__ import annotations

from pydantic import BaseModel
from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session

from .deps import Paging
from .schemas import Page


def fetch(session: Session, query: Select, paging: Paging, model: type[BaseModel]) -> Page:
    """One page of the ORM rows of `query`, each read into `model`, and the total count."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery()))
    rows = session.scalars(query.limit(paging.limit).offset(paging.offset))
    return Page(
        items=[model.model_validate(row) for row in rows],
        total=total or 0,
        limit=paging.limit,
        offset=paging.offset,
    )


def cut(items: list, paging: Paging) -> Page:
    """One page of a list."""
    return Page(
        items=items[paging.offset : paging.offset + paging.limit],
        total=len(items),
        limit=paging.limit,
        offset=paging.offset,
    )


def filters(model, **given: str | None) -> list:
    """`model.<name> == value` for each name whose value is given (not None or empty)."""
    return [getattr(model, name) == value for name, value in given.items() if value]
