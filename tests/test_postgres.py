"""Several tuning processes on one PostgreSQL database (skipped where no server is reachable)."""

import os
import subprocess
import sys

import optuna
from optuna.trial import TrialState
from sqlalchemy import select

from autotuner.search.space import config_key
from storage import Claim, StudyRecord, open_database

from .conftest import ROOT, requires_postgres

OP, CASE = "jagged_to_padded_dense", "b6_n33_d7_fp32"

pytestmark = requires_postgres


def worker(url, trials, **env):
    command = [
        sys.executable,
        "-m",
        "autotuner",
        "run",
        "--op",
        OP,
        "--soc",
        "cpu",
        "--case",
        CASE,
        "--trials",
        str(trials),
        "--db",
        url,
        "--quiet",
    ]
    return subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, **env},
    )


def study_state(url):
    db = open_database(url)
    with db.sessions() as session:
        (record,) = session.scalars(select(StudyRecord)).all()
        claims = list(session.scalars(select(Claim)))
    trials = optuna.load_study(study_name=record.name, storage=url).get_trials(deepcopy=False)
    return record, claims, trials


def test_three_workers_share_a_study_exactly(pg_url):
    open_database(pg_url)  # schema first, as a deployment's migration step would
    processes = [worker(pg_url, 12) for _ in range(3)]
    for process in processes:
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
    record, claims, trials = study_state(pg_url)
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == 12 == record.budget
    assert len({config_key(t.user_attrs["config"]) for t in complete}) == 12
    assert sorted(c.slot for c in claims if c.slot is not None) == list(range(12))
    assert all(c.state in ("complete", "infeasible") for c in claims)
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    assert record.verdict is not None
