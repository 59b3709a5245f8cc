"""Trials straight from Optuna's tables (SQLAlchemy Core): fast for studies of 100,000 trials."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Column, DateTime, Float, Integer, MetaData, String, Table, Text, func, select
from sqlalchemy.orm import Session

from .schemas import TrialOut

#: The columns of Optuna's tables these queries read (Optuna creates and owns the tables).
_metadata = MetaData()
studies = Table(
    "studies",
    _metadata,
    Column("study_id", Integer, primary_key=True),
    Column("study_name", String),
)
trials = Table(
    "trials",
    _metadata,
    Column("trial_id", Integer, primary_key=True),
    Column("number", Integer),
    Column("study_id", Integer),
    Column("state", String),
    Column("datetime_start", DateTime),
    Column("datetime_complete", DateTime),
)
trial_values = Table(
    "trial_values",
    _metadata,
    Column("trial_id", Integer),
    Column("objective", Integer),
    Column("value", Float),
    Column("value_type", String),
)
trial_user_attributes = Table(
    "trial_user_attributes",
    _metadata,
    Column("trial_id", Integer),
    Column("key", String),
    Column("value_json", Text),
)
#: The user attributes a trial row shows.
ATTRIBUTES = ("config", "source", "category", "message")


def state_counts(session: Session, names: list[str]) -> dict[str, dict[str, int]]:
    """Study name -> trial state -> count, for these studies."""
    query = (
        select(studies.c.study_name, trials.c.state, func.count())
        .join(trials, trials.c.study_id == studies.c.study_id)
        .where(studies.c.study_name.in_(names))
        .group_by(studies.c.study_name, trials.c.state)
    )
    counts: dict[str, dict[str, int]] = {name: {} for name in names}
    for name, state, count in session.execute(query):
        counts[name][state] = count
    return counts


def study_id(session: Session, name: str) -> int | None:
    return session.scalar(select(studies.c.study_id).where(studies.c.study_name == name))


def count(session: Session, optuna_id: int) -> int:
    return session.scalar(select(func.count()).where(trials.c.study_id == optuna_id)) or 0


def page(session: Session, optuna_id: int, limit: int, offset: int) -> list[TrialOut]:
    """Trials of one Optuna study by number, with their value and user attributes."""
    rows = session.execute(
        select(
            trials.c.trial_id,
            trials.c.number,
            trials.c.state,
            trial_values.c.value,
            trial_values.c.value_type,
            trials.c.datetime_start,
            trials.c.datetime_complete,
        )
        .outerjoin(
            trial_values,
            (trial_values.c.trial_id == trials.c.trial_id) & (trial_values.c.objective == 0),
        )
        .where(trials.c.study_id == optuna_id)
        .order_by(trials.c.number)
        .limit(limit)
        .offset(offset)
    ).all()
    attributes: dict[int, dict[str, Any]] = {row.trial_id: {} for row in rows}
    query = select(
        trial_user_attributes.c.trial_id,
        trial_user_attributes.c.key,
        trial_user_attributes.c.value_json,
    ).where(
        trial_user_attributes.c.trial_id.in_(list(attributes)),
        trial_user_attributes.c.key.in_(ATTRIBUTES),
    )
    for trial_id, key, value_json in session.execute(query):
        attributes[trial_id][key] = json.loads(value_json)
    return [
        TrialOut(
            number=row.number,
            state=row.state,
            value=row.value if row.value_type == "FINITE" else None,
            config=attributes[row.trial_id].get("config"),
            source=attributes[row.trial_id].get("source"),
            category=attributes[row.trial_id].get("category"),
            message=attributes[row.trial_id].get("message"),
            started_at=row.datetime_start,
            completed_at=row.datetime_complete,
        )
        for row in rows
    ]
