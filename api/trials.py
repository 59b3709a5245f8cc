"""Trials straight from Optuna's tables (SQLAlchemy Core): fast for studies of 100,000 trials."""

from __future__ import annotations

import json
from typing import Any

from optuna.trial import TrialState
from sqlalchemy import (
    Column,
    DateTime,
    Enum,
    Float,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    cast,
    exists,
    func,
    select,
)
from sqlalchemy.orm import Session

from autotuner.report.outcomes import outcome

from .schemas import TrialOut

#: The columns of Optuna's tables these queries read (Optuna creates and owns the tables).
_metadata = MetaData()
#: A trial's state as Optuna declares it (`optuna/storages/_rdb/models.py`: `Enum(TrialState)`):
#: the state's name, a native enum type `trialstate` on PostgreSQL, so a filter's value is bound
#: as that type there; read back as the name.
_state = Enum(*(state.name for state in TrialState), name="trialstate")
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
    Column("state", _state),
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
#: The user attributes a trial row shows (the numbers of `autotune trials`).
ATTRIBUTES = ("config", "source", "category", "message", "median_ms", "p20_ms", "p80_ms", "n",
              "error")  # fmt: skip
#: How a trial table may be sorted: by number, by time (missing last) or by state.
SORTS = ("number", "value", "state")


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


def outcome_counts(session: Session, optuna_id: int) -> dict[str, int]:
    """How a study's trials ended, in the words `autotune run` and `status` use: complete,
    infeasible (rejected before compiling), each failure category, running, ...."""
    category = (
        select(trial_user_attributes.c.value_json)
        .where(
            trial_user_attributes.c.trial_id == trials.c.trial_id,
            trial_user_attributes.c.key == "category",
        )
        .scalar_subquery()
    )
    query = (
        select(trials.c.state, category, func.count())
        .where(trials.c.study_id == optuna_id)
        .group_by(trials.c.state, category)
    )
    counts: dict[str, int] = {}
    for state, value_json, n in session.execute(query):
        name = outcome(state, json.loads(value_json) if value_json else None)
        counts[name] = counts.get(name, 0) + n
    return dict(sorted(counts.items(), key=lambda item: (item[0] != "complete", item[0])))


def categories(session: Session, optuna_id: int) -> list[str]:
    """The failure categories the study's trials have, sorted."""
    query = (
        select(trial_user_attributes.c.value_json)
        .join(trials, trials.c.trial_id == trial_user_attributes.c.trial_id)
        .where(trials.c.study_id == optuna_id, trial_user_attributes.c.key == "category")
        .distinct()
    )
    return sorted(json.loads(v) for v in session.scalars(query))


def study_id(session: Session, name: str) -> int | None:
    return session.scalar(select(studies.c.study_id).where(studies.c.study_name == name))


def _where(optuna_id: int, state: str | None, category: str | None) -> list:
    where = [trials.c.study_id == optuna_id]
    if state:
        where.append(trials.c.state == state)
    if category:
        where.append(
            exists().where(
                trial_user_attributes.c.trial_id == trials.c.trial_id,
                trial_user_attributes.c.key == "category",
                trial_user_attributes.c.value_json == json.dumps(category),
            )
        )
    return where


def count(
    session: Session, optuna_id: int, state: str | None = None, category: str | None = None
) -> int:
    query = select(func.count()).select_from(trials).where(*_where(optuna_id, state, category))
    return session.scalar(query) or 0


def page(
    session: Session,
    optuna_id: int,
    limit: int,
    offset: int,
    state: str | None = None,
    category: str | None = None,
    sort: str = "number",
) -> list[TrialOut]:
    """Trials of one Optuna study (of `state`, failed with `category`), sorted by `sort` (one of
    SORTS) then number, with their value and user attributes."""
    value = trial_values.c.value
    order = {
        "number": (trials.c.number,),
        "value": (value.is_(None), value, trials.c.number),
        # by name on every database (PostgreSQL's enum would sort in declaration order)
        "state": (cast(trials.c.state, String), trials.c.number),
    }[sort]
    return _read(session, _where(optuna_id, state, category), order, limit, offset)


def trial(session: Session, optuna_id: int, number: int) -> TrialOut | None:
    """One trial of the study by its number."""
    where = [trials.c.study_id == optuna_id, trials.c.number == number]
    found = _read(session, where, (trials.c.number,), 1, 0)
    return found[0] if found else None


def _read(session: Session, where: list, order: tuple, limit: int, offset: int) -> list[TrialOut]:
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
        .where(*where)
        .order_by(*order)
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
            **{key: attributes[row.trial_id].get(key) for key in ATTRIBUTES},
            started_at=row.datetime_start,
            completed_at=row.datetime_complete,
        )
        for row in rows
    ]
