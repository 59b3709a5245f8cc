"""A run killed with SIGKILL, a claim of another host, concurrent verdicts: on SQLite and PostgreSQL."""

import os
import signal
import subprocess
import sys
import time
from datetime import timedelta

import optuna
import pytest
from optuna.trial import TrialState
from sqlalchemy import select

from autotuner.search.space import config_key
from autotuner.settings import settings
from core.errors import UserError
from storage import Claim, Run, StudyRecord, open_database
from storage.models import utcnow

from .conftest import ROOT, requires_postgres
from .test_search import COPY_CASE, COPY_OP, trials_of, tune


def autotune_run(db_url, trials, *extra, cases=(COPY_CASE,), env=None):
    command = [sys.executable, "-m", "autotuner", "run", "--op", COPY_OP, "--soc", "cpu"]
    command += [*(a for case in cases for a in ("--case", case)), "--trials", str(trials)]
    command += ["--db", db_url]
    return subprocess.Popen(
        [*command, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "250", **(env or {})},
    )


def running_claim_after(db_url, completed: int, timeout_s: float = 180) -> Claim:
    """Wait until `completed` configs are measured and another one is in flight."""
    deadline = time.monotonic() + timeout_s
    db = None
    while time.monotonic() < deadline:
        time.sleep(0.2)
        try:
            db = db or open_database(db_url)
            with db.sessions() as session:
                claims = list(session.scalars(select(Claim)))
        except Exception:  # noqa: BLE001 - the schema may not exist yet
            continue
        running = [c for c in claims if c.state == "running" and c.trial_number is not None]
        if running and sum(c.state == "complete" for c in claims) >= completed:
            return running[0]
    raise AssertionError("the run never had a config in flight")


def test_a_run_killed_mid_trial_is_resumed_to_the_full_budget(any_db):
    victim = autotune_run(any_db, 12, "--quiet")
    killed = running_claim_after(any_db, completed=3)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    # At once, with the default stale time of two minutes: the owner is known to be gone.
    resumed = autotune_run(any_db, 12, "--quiet")
    _, err = resumed.communicate(timeout=300)
    assert resumed.returncode == 0, err
    db = open_database(any_db)
    with db.sessions() as session:
        record = session.scalars(select(StudyRecord)).one()
        claims = list(session.scalars(select(Claim)))
        runs = {r.id: r.status for r in session.scalars(select(Run))}
    trials = trials_of(any_db, record.name)
    assert not [t for t in trials if t.state == TrialState.RUNNING]
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == 12 == len({config_key(t.user_attrs["config"]) for t in complete})
    assert killed.config_key in {config_key(t.user_attrs["config"]) for t in complete}
    (stale,) = [t for t in trials if t.user_attrs.get("category") == "stale"]
    assert "no longer exists" in stale.user_attrs["message"]
    assert all(c.state != "running" for c in claims)
    assert record.verdict_trials == 12 == record.verdict["complete_trials"]
    assert runs == {killed.run_id: "died", max(runs): "finished"}


def test_another_hosts_claim_is_waited_for_then_requeued_when_stale(tmp_path, monkeypatch):
    """The claim of a process elsewhere holds its slot until its heartbeat is stale; the study
    is not settled short meanwhile (and SQLite's naive datetimes compare with aware ones)."""
    db_url = f"sqlite:///{tmp_path / 'autotune.db'}"
    (record,) = tune(db_url, trials=4)
    measured = {config_key(t.user_attrs["config"]) for t in trials_of(db_url, record.name)}
    db = open_database(db_url)
    orphan = config_key({"BLOCK_ROW": 2, "BLOCK_COL": 16, "num_warps": 1, "PROGRAMS": 0})
    assert orphan not in measured
    with db.sessions() as session:
        session.add(
            Claim(
                study_id=record.id, config_key=orphan, slot=4, state="running",
                worker="elsewhere:4242", host="elsewhere", pid=4242, pid_started=0.0,
                heartbeat_at=utcnow() - timedelta(seconds=1),
            )
        )  # fmt: skip
        session.commit()
    monkeypatch.setenv("AUTOTUNE_STALE_AFTER_S", "3")
    settings.cache_clear()
    try:
        started = time.monotonic()
        (record,) = tune(db_url, trials=6)
    finally:
        settings.cache_clear()
    assert time.monotonic() - started >= 2  # it waited for the other host's claim to go stale
    trials = trials_of(db_url, record.name)
    complete = {
        config_key(t.user_attrs["config"]) for t in trials if t.state == TrialState.COMPLETE
    }
    assert orphan in complete and len(complete) == 6
    assert record.verdict_trials == 6 == record.verdict["complete_trials"]
    with db.sessions() as session:
        assert all(c.state != "running" for c in session.scalars(select(Claim)))


def _verdicts(stdout: str) -> dict[str, tuple[str, str]]:
    """case -> (verdict, speedup) from a run's summary table."""
    rows = {}
    for line in stdout.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == 10 and cells[0] == "fwd":
            rows[cells[1]] = (cells[7], cells[8])
    return rows


@requires_postgres
def test_concurrent_processes_agree_on_every_verdict(pg_url):
    """Three processes, two studies of eight trials (the closing note of issue 19 has the same
    on all nine cases of the op)."""
    cases = ["b1_n8_d16_fp32", "b1_n8_d16_bf16"]
    open_database(pg_url)
    processes = [autotune_run(pg_url, 8, cases=cases) for _ in range(3)]
    outputs = []
    for process in processes:
        out, err = process.communicate(timeout=900)
        assert process.returncode == 0, err
        outputs.append(_verdicts(out))
    assert set(outputs[0]) == set(cases) and outputs[0] == outputs[1] == outputs[2]
    db = open_database(pg_url)
    with db.sessions() as session:
        records = list(session.scalars(select(StudyRecord)))
    assert len(records) == 2
    for record in records:
        complete = [
            t
            for t in optuna.load_study(study_name=record.name, storage=pg_url).get_trials()
            if t.state == TrialState.COMPLETE
        ]
        assert len(complete) == 8 == record.verdict["complete_trials"] == record.verdict_trials


def test_two_processes_never_propose_a_config_twice(any_db):
    """Each config is claimed before its trial exists: two processes on one study hold exactly
    the budget's trials between them, each config once, no pseudo-trials (issue 14)."""
    open_database(any_db)  # schema first, as a deployment's migration step would
    processes = [autotune_run(any_db, 10, "--quiet") for _ in range(2)]
    for process in processes:
        _, err = process.communicate(timeout=600)
        assert process.returncode == 0, err
    db = open_database(any_db)
    with db.sessions() as session:
        record = session.scalars(select(StudyRecord)).one()
        claims = list(session.scalars(select(Claim)))
        runs = list(session.scalars(select(Run)))
    trials = trials_of(any_db, record.name)
    measured = [t for t in trials if t.user_attrs.get("category") != "infeasible"]
    assert len(measured) == 10 and all(t.state == TrialState.COMPLETE for t in measured)
    keys = [config_key(t.user_attrs["config"]) for t in trials]
    assert len(keys) == len(set(keys)) == len(claims)
    assert sorted(c.slot for c in claims if c.slot is not None) == list(range(10))
    assert [r.status for r in runs] == ["finished", "finished"]


def test_restart_is_refused_while_another_process_measures(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'autotune.db'}"
    victim = autotune_run(db_url, 30, "--quiet")
    try:
        running_claim_after(db_url, completed=1)
        refused = autotune_run(db_url, 30, "--restart", "--quiet")
        _, err = refused.communicate(timeout=120)
        assert refused.returncode == 2
        (line,) = err.strip().splitlines()
        assert line.startswith("error: --restart refused: live processes are measuring")
        assert f"{COPY_OP}/fwd/{COPY_CASE}/cpu/" in line and f":{victim.pid}" in line
        assert "--force" in line
        with open_database(db_url).sessions() as session:  # nothing discarded, no run recorded
            assert len(session.scalars(select(Run)).all()) == 1
            record = session.scalars(select(StudyRecord)).one()
        assert any(t.state == TrialState.COMPLETE for t in trials_of(db_url, record.name))
    finally:
        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)
    # Its owner gone, the study is no longer anyone's: --restart goes ahead.
    allowed = autotune_run(db_url, 4, "--restart", "--quiet")
    _, err = allowed.communicate(timeout=300)
    assert allowed.returncode == 0, err
    complete = [t for t in trials_of(db_url, record.name) if t.state == TrialState.COMPLETE]
    assert len(complete) == 4


def test_restart_force_discards_a_study_another_host_measures(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'autotune.db'}"
    (record,) = tune(db_url, trials=4)
    db = open_database(db_url)
    with db.sessions() as session:
        session.add(
            Claim(
                study_id=record.id, config_key=config_key({"BLOCK_ROW": 2, "BLOCK_COL": 16, "num_warps": 1}),
                slot=4, state="running", worker="elsewhere:4242", host="elsewhere", pid=4242,
                pid_started=0.0, heartbeat_at=utcnow(),
            )
        )  # fmt: skip
        session.commit()
    with pytest.raises(UserError, match=r"--restart refused: .*\(elsewhere:4242\)"):
        tune(db_url, trials=4, restart=True)
    (again,) = tune(db_url, trials=4, restart=True, force=True)
    with db.sessions() as session:
        assert all(c.worker != "elsewhere:4242" for c in session.scalars(select(Claim)))
    assert again.verdict_trials == 4
