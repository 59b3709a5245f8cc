"""Tests run kernels under the Triton interpreter; GPU tests skip with a reason where there is none."""

import os
import shutil
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path

import pytest
import sqlalchemy as sa

os.environ["TRITON_INTERPRET"] = "1"
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")

from autotuner.backends import get_backend  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KIB = 1024  # the Ascend memory sizes the tests state are in KiB


@pytest.fixture(scope="session")
def cpu():
    return get_backend("cpu")


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A scratch copy of the project's ATK folders and frozen_configs, as AUTOTUNE_ROOT."""
    for part in ("experimental", "frozen_configs"):
        if (ROOT / part).exists():
            shutil.copytree(
                ROOT / part, tmp_path / part, ignore=shutil.ignore_patterns("__pycache__")
            )
    monkeypatch.setenv("AUTOTUNE_ROOT", str(tmp_path))
    _forget_ports()
    yield tmp_path
    _forget_ports()


def _forget_ports() -> None:
    """Drop loaded port modules, so the next load reads the file of the current AUTOTUNE_ROOT."""
    for name in [n for n in sys.modules if n.startswith("_autotune_ports_")]:
        del sys.modules[name]


#: The PostgreSQL server the tests make their databases on (each its own, dropped after).
POSTGRES_SERVER = os.environ.get(
    "AUTOTUNE_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _postgres_admin() -> sa.Engine:
    return sa.create_engine(
        POSTGRES_SERVER, isolation_level="AUTOCOMMIT", connect_args={"connect_timeout": 5}
    )


@cache
def postgres_reachable() -> bool:
    try:
        with _postgres_admin().connect():
            return True
    except Exception:  # noqa: BLE001
        return False


requires_postgres = pytest.mark.skipif(
    not postgres_reachable(), reason=f"no PostgreSQL server reachable at {POSTGRES_SERVER}"
)


def pytest_configure(config: pytest.Config) -> None:
    """AUTOTUNE_REQUIRE_POSTGRES=1 (CI): no server is an error, not skipped tests."""
    if os.environ.get("AUTOTUNE_REQUIRE_POSTGRES") == "1" and not postgres_reachable():
        raise pytest.UsageError(
            f"AUTOTUNE_REQUIRE_POSTGRES=1 but no PostgreSQL server is reachable at "
            f"{POSTGRES_SERVER} (AUTOTUNE_TEST_POSTGRES)"
        )


@contextmanager
def postgres_database() -> Iterator[str]:
    """The URL of a new, empty database of its own on the server; dropped on leaving."""
    name = f"autotune_test_{uuid.uuid4().hex[:10]}"
    admin = _postgres_admin()
    with admin.connect() as connection:
        connection.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield sa.make_url(POSTGRES_SERVER).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture
def pg_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


#: The databases every test that talks to one runs on (PostgreSQL skipped where unreachable).
DATABASES = ["sqlite", pytest.param("postgresql", marks=requires_postgres)]


@contextmanager
def empty_database(kind: str, folder: Path) -> Iterator[str]:
    """The URL of a new, empty database of `kind` ("sqlite": a file in `folder`)."""
    if kind == "sqlite":
        yield f"sqlite:///{folder / 'autotune.db'}"
    else:
        with postgres_database() as url:
            yield url


@pytest.fixture(params=DATABASES)
def any_db(request, tmp_path) -> Iterator[str]:
    """An empty database for one test, on SQLite and on PostgreSQL."""
    with empty_database(request.param, tmp_path) as url:
        yield url


@pytest.fixture(scope="module", params=DATABASES)
def module_db(request, tmp_path_factory) -> Iterator[str]:
    """An empty database shared by a module's tests, on SQLite and on PostgreSQL."""
    with empty_database(request.param, tmp_path_factory.mktemp(request.param)) as url:
        yield url


def cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


requires_gpu = pytest.mark.skipif(
    not cuda_available(), reason="needs a CUDA GPU; none on this machine"
)


def autotune_cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, timeout: float = 300
) -> subprocess.CompletedProcess:
    """`python -m autotuner ARGS` in a fresh process run in `cwd` (the checkout under test), its
    output captured as text, on a terminal wide enough for the tables; `env` is added to this
    process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "250", **(env or {})},
        cwd=cwd,
        timeout=timeout,
    )


def compiled_run(script: str) -> str:
    """Run `script` in a fresh Python without TRITON_INTERPRET (set above for this process, under
    which kernels run on the host even with CUDA tensors) and return its stdout; a GPU test's
    way to run the compiled kernels."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def verify_all_passed(summary: str) -> bool:
    """The last line of `autotune verify --all --soc cpu` says every output of every op's
    accuracy cases passed."""
    import re

    from ops import all_ops

    cases = sum(len(spec.cases("accuracy")) for spec in all_ops().values())
    return re.match(rf"(\d+) outputs of {cases} cases: \1 passed, 0 failed", summary) is not None
