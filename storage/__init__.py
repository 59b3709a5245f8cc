"""Storage: SQLAlchemy 2.0 models and sessions, and export and import between databases
(`transfer`); Optuna's own tables live in the same database."""

from .db import Database, open_database
from .models import (
    AccuracyResult,
    Base,
    Baseline,
    CheckVerdict,
    Claim,
    CompileRecord,
    DeviceCeiling,
    FrozenVersion,
    Run,
    StudyRecord,
    UserCase,
)

__all__ = [
    "AccuracyResult",
    "Base",
    "Baseline",
    "CheckVerdict",
    "Claim",
    "CompileRecord",
    "Database",
    "DeviceCeiling",
    "FrozenVersion",
    "Run",
    "StudyRecord",
    "UserCase",
    "open_database",
]
