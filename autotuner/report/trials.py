"""`autotune trials`: every trial of an op's studies as one pandas DataFrame, from Optuna's trials
(number, state, user attributes) and our study records (kernel, case, soc)."""

from __future__ import annotations

import optuna
import pandas as pd
from sqlalchemy import select

from storage import Database, StudyRecord, optuna_storage

#: Columns before the config's and after it; a config's tunables go between, in the order seen.
LEADING = ("kernel", "case", "soc", "number")
TRAILING = ("state", "source", "category", "median_ms", "p20_ms", "p80_ms", "n", "error", "message")


def trials_frame(
    db: Database, op: str, soc: str | None = None, case: str | None = None
) -> pd.DataFrame:
    """One row per trial of the op's studies (on `soc`, of `case` where given), by kernel, case,
    soc and trial number. `error` is a trial's worst norm-wise relative error against the
    float64 reference, `message` why it failed."""
    query = select(StudyRecord).where(StudyRecord.op == op)
    if soc:
        query = query.where(StudyRecord.soc == soc)
    if case:
        query = query.where(StudyRecord.case_name == case)
    with db.sessions() as session:
        records = list(session.scalars(query))
    rows = []
    tunables: dict[str, None] = {}
    storage = optuna_storage(db) if records else None
    for record in records:
        study = optuna.load_study(study_name=record.name, storage=storage)
        for trial in study.get_trials(deepcopy=False):
            attrs = trial.user_attrs
            config = attrs.get("config") or {}
            tunables.update(dict.fromkeys(config))
            rows.append(
                {
                    "kernel": record.kernel,
                    "case": record.case_name,
                    "soc": record.soc,
                    "number": trial.number,
                    **config,
                    "state": trial.state.name,
                    "median_ms": attrs.get("median_ms", trial.value),
                    **{k: attrs.get(k) for k in TRAILING if k not in ("state", "median_ms")},
                }
            )
    columns = [*LEADING, *tunables, *TRAILING]
    frame = pd.DataFrame(rows, columns=columns)
    whole = [*tunables, "n"]
    frame[whole] = frame[whole].convert_dtypes()  # ints stay ints beside missing values
    return frame.sort_values(["kernel", "case", "soc", "number"], ignore_index=True)
