"""Engines and sessions for SQLite (the embedded default) and PostgreSQL, schema by alembic."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from filelock import FileLock
from sqlalchemy.engine import Engine
from sqlalchemy.exc import ArgumentError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from core.errors import UserError
from core.files import unwritable

MIGRATIONS = Path(__file__).parent / "migrations"
#: Optuna keeps its own alembic history in `alembic_version`; ours lives beside it.
VERSION_TABLE = "autotune_alembic_version"


@dataclass
class Database:
    url: str
    engine: Engine
    sessions: sessionmaker[Session]


def _engine(url: str) -> Engine:
    try:
        if url.startswith("sqlite"):
            engine = sa.create_engine(url, connect_args={"timeout": 60})

            @sa.event.listens_for(engine, "connect")
            def _sqlite_pragmas(dbapi_connection, _record):  # several processes share one file
                cursor = dbapi_connection.cursor()
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA foreign_keys=ON")
                cursor.close()

            return engine
        return sa.create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=5)
    except (ArgumentError, ImportError, ValueError) as exc:
        raise UserError(f"bad database URL {url!r}: {str(exc).splitlines()[0]}") from None


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.set_main_option("version_table", VERSION_TABLE)
    return config


#: PostgreSQL advisory lock key serializing schema changes of concurrent processes.
SCHEMA_LOCK = 0x6175746F


@contextmanager
def _schema_lock(engine: Engine) -> Iterator[None]:
    """One process at a time creates or migrates the schema (ours and Optuna's)."""
    url = engine.url
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        folder = Path(url.database).resolve().parent
        if not folder.is_dir():
            raise UserError(f"cannot reach the database {url}: folder {folder} does not exist")
        if unwritable(Path(f"{url.database}.lock")):  # a read-only folder: its database is read
            yield
            return
        with FileLock(f"{url.database}.lock"):
            yield
    elif url.get_backend_name() == "postgresql":
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT pg_advisory_lock(:key)"), {"key": SCHEMA_LOCK})
            try:
                yield
            finally:
                connection.execute(sa.text("SELECT pg_advisory_unlock(:key)"), {"key": SCHEMA_LOCK})
    else:
        yield


class MissingDatabase(UserError):
    """A SQLite file that does not exist, asked for by a command that only reads."""


def sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL; None for other databases and in-memory SQLite."""
    try:
        parsed = sa.engine.make_url(url)
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database)


def open_database(url: str, create: bool = True) -> Database:
    """Connect (one-line UserError if unreachable) and bring the schema to the newest revision.

    `create=False` (commands that only read): a SQLite file that does not exist is a
    `MissingDatabase` naming it, and nothing is created (a mistyped path reads as an error, not
    as an empty database).
    """
    import optuna

    path = sqlite_file(url)
    if not create and path is not None and not path.is_file():
        raise MissingDatabase(
            f"no database at {path.resolve()}: nothing recorded there yet "
            "(check --db or AUTOTUNE_DB; `autotune run` creates it)"
        )
    if path is not None and not path.exists() and (reason := unwritable(path)):
        raise UserError(f"nothing written: cannot create the database {path}: {reason}")
    engine = _engine(url)
    try:
        with _schema_lock(engine):
            with engine.begin() as connection:
                config = alembic_config(url)
                config.attributes["connection"] = connection
                command.upgrade(config, "head")
            optuna.storages.RDBStorage(url).remove_session()  # creates Optuna's tables, once
    except OperationalError as exc:
        engine.dispose()
        reason = str(exc.orig).strip().splitlines()[0] if exc.orig else str(exc).splitlines()[0]
        raise UserError(
            f"cannot reach the database {sa.engine.make_url(url).render_as_string(hide_password=True)}: {reason}"
        ) from None
    return Database(url, engine, sessionmaker(engine, expire_on_commit=False))


def optuna_storage(db: Database):
    """Optuna's tables in our database, engines checked before use (PostgreSQL restarts)."""
    import optuna

    engine_kwargs = {} if db.url.startswith("sqlite") else {"pool_pre_ping": True}
    return optuna.storages.RDBStorage(db.url, engine_kwargs=engine_kwargs, heartbeat_interval=None)
