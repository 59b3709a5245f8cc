"""The trial view of a study: the table with its filters and sort as plain links, one trial's
detail with the compiler's verdict, the parallel coordinates, live refresh while trials run; and
the same counts as `autotune status` for the same database."""

from __future__ import annotations

import re

import optuna
import pytest
from fastapi.testclient import TestClient
from optuna.distributions import IntDistribution
from optuna.trial import TrialState, create_trial

from api.main import create_app
from autotuner.report.studies import summarize
from storage import CompileRecord, open_database, optuna_storage
from tests.dashboard_seed import (
    JTPD,
    MAIN_COMPLETE,
    MAIN_FAILED,
    STUDY_MAIN,
    _study_record,
    seed,
)


@pytest.fixture(scope="module")
def seeded(module_db):
    """The seeded database, on SQLite and on PostgreSQL."""
    return seed(module_db)


@pytest.fixture(scope="module")
def client(seeded):
    app = create_app(seeded.url, repository=False, optuna_dashboard="http://127.0.0.1:8081")
    return TestClient(app)


def _numbers(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<tr data-number="(\d+)"', html)]


def test_the_table_filters_and_sorts_without_javascript(client, seeded):
    url = f"/studies/{seeded.study_ids[STUDY_MAIN]}"
    response = client.get(url)
    assert response.status_code == 200  # on PostgreSQL too: the state filter's type (issue 48)
    page = response.text
    assert _numbers(page) == list(range(MAIN_COMPLETE + MAIN_FAILED))
    assert "<script" not in page[page.index('<table class="trials">') :]
    assert f'data-outcome="complete">complete {MAIN_COMPLETE}' in page
    assert f'data-outcome="compile">compile {MAIN_FAILED}' in page
    assert 'href="?category=compile&amp;sort=number"' in page  # a filter is a link
    failed = client.get(url, params={"category": "compile"}).text
    assert _numbers(failed) == list(range(MAIN_COMPLETE, MAIN_COMPLETE + MAIN_FAILED))
    assert f"{MAIN_FAILED} trials failed with compile" in failed
    assert (
        client.get(url, params={"state": "", "category": "", "sort": "number"}).status_code == 200
    )
    fastest = _numbers(client.get(url, params={"state": "COMPLETE", "sort": "value"}).text)
    assert len(fastest) == MAIN_COMPLETE and fastest[0] == 3  # BLOCK_N=128, num_warps=1
    assert client.get(url, params={"state": "DONE"}).status_code == 422
    by_state = _numbers(client.get(url, params={"sort": "state"}).text)  # by name everywhere
    assert by_state == list(range(MAIN_COMPLETE + MAIN_FAILED))  # COMPLETE before FAIL
    assert 'id="parallel-coordinates"' in page
    assert '<a class="optuna-dashboard" href="http://127.0.0.1:8081/dashboard/studies/' in page
    assert 'http-equiv="refresh"' not in page  # nothing running


def test_the_json_api_filters_alike(client, seeded):
    url = f"/api/studies/{seeded.study_ids[STUDY_MAIN]}/trials"
    body = client.get(url, params={"state": "FAIL"}).json()
    assert body["total"] == MAIN_FAILED and {t["category"] for t in body["items"]} == {"compile"}
    assert client.get(url, params={"category": "timeout"}).json()["total"] == 0


def test_a_trial_with_its_compiler_verdict(client, seeded):
    db = open_database(seeded.url)
    with db.sessions() as session:
        session.add(
            CompileRecord(
                key="k" * 64,
                op=JTPD,
                kernel="fwd",
                soc="H200",
                case_name="c",
                config={"BLOCK_N": 16, "num_warps": 8},
                category="ub_overflow",
                message="UB overflow, requires 1572864 bits",
                seconds=2.5,
                required_bits=1572864,
                available_bits=1572864 // 2,
                multibuffer_dropped=False,
                memory={},
                compiler="bishengir-compile 1.2.0 for Ascend910B",
            )  # fmt: skip
        )
        session.commit()
    db.engine.dispose()
    base = f"/studies/{seeded.study_ids[STUDY_MAIN]}/trials"
    failed = client.get(f"{base}/12").text  # BLOCK_N=16, num_warps=8 (tests/dashboard_seed.py)
    assert "out of resources (12)" in failed and "BLOCK_N=16, num_warps=8" in failed
    assert "bishengir-compile 1.2.0 for Ascend910B</code>: ub_overflow" in failed
    assert "needs 196608 of 98304 bytes" in failed
    complete = client.get(f"{base}/0").text
    assert "No compile record of this config" in complete and "exhaustive" in complete
    assert client.get(f"{base}/999").status_code == 404
    assert client.get("/studies/999999").status_code == 404


def test_a_running_study_reloads(any_db):
    url = any_db
    db = open_database(url)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with db.sessions() as session:
        record = _study_record("live", "H200", "c", None)
        session.add(record)
        session.commit()
        study_id = record.id
    study = optuna.create_study(study_name="live", storage=optuna_storage(db))
    study.add_trial(
        create_trial(
            params={"BLOCK_N": 5},
            distributions={"BLOCK_N": IntDistribution(4, 7)},
            state=TrialState.RUNNING,
            user_attrs={"config": {"BLOCK_N": 32}},
        )  # fmt: skip
    )
    db.engine.dispose()
    page = TestClient(create_app(url, repository=False)).get(f"/studies/{study_id}").text
    assert '<meta http-equiv="refresh" content="10">' in page
    assert 'data-outcome="running">running 1' in page


def test_dashboard_and_status_count_alike(client, seeded):
    """`autotune status` (report.studies.summarize) and the op page say the same per study."""
    page = client.get(f"/ops/{JTPD}").text
    for summary in summarize(open_database(seeded.url), op=JTPD):
        words = [f"complete {summary.complete}"] if summary.complete else []
        words += [f"{k} {v}" for k, v in sorted(summary.failures.items())]
        words += [f"infeasible {summary.infeasible}"] if summary.infeasible else []
        assert (
            f"trials: {', '.join(sorted(words, key=lambda w: (not w.startswith('complete'), w)))}."
            in page
        )
