"""Storage: SQLAlchemy 2.0 models and sessions, and export and import between databases
(`transfer`); Optuna's own tables live in the same database."""

from .db import Database, MissingDatabase, open_database, optuna_storage
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
    "MissingDatabase",
    "DeviceCeiling",
    "FrozenVersion",
    "Run",
    "StudyRecord",
    "UserCase",
    "open_database",
    "optuna_storage",
]
