"""Storage: SQLAlchemy 2.0 models and sessions; Optuna's own tables live in the same database."""

from .db import Database, open_database
from .models import (
    Base,
    Baseline,
    CheckVerdict,
    Claim,
    FrozenVersion,
    Run,
    StudyRecord,
    UserCase,
)

__all__ = [
    "Base",
    "Baseline",
    "CheckVerdict",
    "Claim",
    "Database",
    "FrozenVersion",
    "Run",
    "StudyRecord",
    "UserCase",
    "open_database",
]
