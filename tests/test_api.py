"""The JSON API and the HTML pages over a seeded database, SQLite and PostgreSQL (no GPU, no
interpreter)."""

import json
import math

import pytest
from fastapi.testclient import TestClient

from api.formatting import ms
from api.main import create_app
from api.plots import overview_chart
from api.schemas import CaseOut
from autotuner.freeze import import_check
from autotuner.settings import settings
from core.errors import UserError
from ops import all_ops
from tests.dashboard_seed import (
    ACCURACY,
    ACCURACY_FAILURES,
    CASE_A,
    CASE_B,
    CASE_CPU,
    CASE_FLASH,
    CASE_VERIFIED,
    EXPECTED,
    FLASH,
    JTPD,
    LEGACY,
    MAIN_COMPLETE,
    MAIN_FAILED,
    REGRESSED,
    STUDY_CPU,
    STUDY_MAIN,
    seed,
)


@pytest.fixture(scope="module")
def seeded(module_db):
    """The seeded database, on SQLite and on PostgreSQL."""
    return seed(module_db)


@pytest.fixture(scope="module")
def client(seeded):
    return TestClient(create_app(seeded.url, repository=False))


@pytest.fixture
def api_token(monkeypatch):
    """Set AUTOTUNE_API_TOKEN (None: unset) for the app's settings."""

    def use(token: str | None) -> None:
        if token is None:
            monkeypatch.delenv("AUTOTUNE_API_TOKEN", raising=False)
        else:
            monkeypatch.setenv("AUTOTUNE_API_TOKEN", token)
        settings.cache_clear()

    yield use
    settings.cache_clear()


def _cases(client, **params) -> dict:
    body = client.get("/api/cases", params={"limit": 1000, **params}).json()
    assert body["total"] == len(body["items"])
    return {(c["op"], c["soc"], c["case_name"], c["part"]): c for c in body["items"]}


def test_cases_match_the_seeded_rows(client):
    cases = _cases(client)
    assert set(EXPECTED) <= set(cases)
    for key, (frozen, gpu, ratio, speedup) in EXPECTED.items():
        row = cases[key]
        assert row["frozen_ms"] == pytest.approx(frozen), key
        assert row["gpu_baseline_ms"] == pytest.approx(gpu), key
        assert row["ratio_to_gpu"] == pytest.approx(ratio), key
        assert row["speedup_over_default"] == pytest.approx(speedup), key
    main = cases[(JTPD, "H200", CASE_A, "fwd")]
    assert main["label"] == "M1"  # the newest frozen version, not M0
    assert {b["source"]: b["median_ms"] for b in main["baselines"]} == {
        "port_default": 0.0311,
        "port_frozen": 0.02905,
        "upstream": 0.0305,  # the newer of two upstream timings
    }
    assert main["check"]["regressed"] and main["check"]["change"] == pytest.approx(0.081)
    assert cases[(JTPD, "H200", CASE_B, "fwd")]["check"]["regressed"] is False
    bwd = cases[(FLASH, "910B", "b1024_n256_d128_t128_bf16", "bwd")]
    assert sorted(k["kernel"] for k in bwd["kernels"]) == [
        "bwd_dk",
        "bwd_dv_db_dq",
        "bwd_preprocess",
    ]
    assert bwd["gpu_baseline_soc"] == "H200"
    interpreted = cases[(JTPD, "cpu", CASE_CPU, "fwd")]
    assert interpreted["interpreter"] is True and interpreted["frozen_ms"] == 12.5


def test_cases_filters_and_pages(client):
    assert {k[0] for k in _cases(client, op=FLASH)} == {FLASH}
    assert list(_cases(client, soc="cpu")) == [(JTPD, "cpu", CASE_CPU, "fwd")]
    assert _cases(client, op="no_such_op") == {}
    everything = client.get("/api/cases", params={"limit": 1000}).json()["items"]
    first = client.get("/api/cases", params={"limit": 3}).json()
    rest = client.get("/api/cases", params={"limit": 1000, "offset": 3}).json()
    assert (first["total"], first["limit"], first["offset"]) == (len(everything), 3, 0)
    assert first["items"] + rest["items"] == everything
    for bad in ({"limit": 0}, {"limit": 1001}, {"offset": -1}, {"op": "a b"}):
        assert client.get("/api/cases", params=bad).status_code == 422, bad


def test_baselines_filters_and_pages(client):
    upstream = client.get("/api/baselines", params={"source": "upstream"}).json()
    assert upstream["total"] == 6
    assert all(b["source"] == "upstream" for b in upstream["items"])
    times = [b["measured_at"] for b in upstream["items"]]
    assert times == sorted(times, reverse=True)
    cpu = client.get("/api/baselines", params={"op": JTPD, "soc": "cpu"}).json()
    assert [(b["soc"], b["interpreter"]) for b in cpu["items"]] == [("cpu", True)]
    page = client.get("/api/baselines", params={"limit": 2, "offset": 8}).json()
    assert (page["total"], len(page["items"])) == (9, 1)


def test_frozen_versions_newest_first(client):
    body = client.get("/api/frozen-versions", params={"op": JTPD, "soc": "H200"}).json()
    assert [v["label"] for v in body["items"]] == ["M1", "M0"]
    assert body["items"][0]["entries"][f"fwd {CASE_A}"]["median_ms"] == 0.02903
    assert client.get("/api/frozen-versions").json()["total"] == 5
    on_cpu = client.get("/api/frozen-versions", params={"soc": "cpu"}).json()["items"]
    assert [(v["label"], v["interpreter"]) for v in on_cpu] == [("M1", True)]


def test_regressions_are_the_newest_checks(client):
    regressed = client.get("/api/regressions").json()["items"]
    assert [(c["op"], c["soc"], c["case_name"], c["part"]) for c in regressed] == [REGRESSED]
    latest = client.get("/api/regressions", params={"only_regressed": False}).json()
    assert latest["total"] == 2  # CASE_A's older, passing check is superseded
    assert [c["regressed"] for c in latest["items"]] == [True, False]
    assert client.get("/api/regressions", params={"soc": "910B"}).json()["total"] == 0


def test_accuracy_filters_pages_and_the_newest_verdicts(client):
    everything = client.get("/api/accuracy").json()
    assert everything["total"] == 7
    times = [a["verified_at"] for a in everything["items"]]
    assert times == sorted(times, reverse=True)
    newest = client.get("/api/accuracy", params={"latest": True}).json()
    assert newest["total"] == 5  # the older verdicts of two outputs are superseded
    failed = client.get("/api/accuracy", params={"latest": True, "passed": False}).json()["items"]
    assert {(a["op"], a["soc"], a["case_name"], a["output"]) for a in failed} == ACCURACY_FAILURES
    assert client.get("/api/accuracy", params={"passed": False}).json()["total"] == 3
    on_cpu = client.get("/api/accuracy", params={"op": JTPD, "soc": "cpu", "case": CASE_CPU})
    assert [(a["passed"], a["interpreter"]) for a in on_cpu.json()["items"]] == [
        (True, True),
        (False, True),
    ]
    first = client.get("/api/accuracy", params={"limit": 2, "offset": 6}).json()
    assert (first["total"], len(first["items"])) == (7, 1)
    main = client.get("/api/accuracy", params={"op": JTPD, "case": CASE_A}).json()["items"][0]
    assert main["reason"] == "MERE ratio 2.5 > 2" and main["configs"]["fwd"]["BLOCK_N"] == 64
    assert main["metrics"]["ratios"]["mare"] == 1.0 and main["toolchain"]["torch"] == "2.13.0"
    for bad in ({"case": "a b"}, {"passed": "maybe"}, {"limit": 0}):
        assert client.get("/api/accuracy", params=bad).status_code == 422, bad


def test_cases_carry_the_newest_verdict_of_their_case(client):
    cases = _cases(client)
    for (op, soc, case, _), row in cases.items():
        cell = ACCURACY.get((op, soc, case))
        assert (row["accuracy"] is None) == (cell is None), (op, soc, case)
        if cell:
            assert row["accuracy"]["passed"] == (cell == "pass")
    assert cases[(JTPD, "H200", CASE_A, "fwd")]["accuracy"]["failed"] == [
        "dense: MERE ratio 2.5 > 2"
    ]
    verified_only = cases[(JTPD, "H200", CASE_VERIFIED, "-")]  # no frozen config, no baseline
    assert verified_only["frozen_ms"] is None and verified_only["accuracy"]["outputs"] == 1


def test_ops_known_and_from_the_database(client):
    ops = {o["name"]: o for o in client.get("/api/ops").json()}
    assert set(all_ops()) | {LEGACY} == set(ops)
    assert ops[LEGACY]["known"] is False and ops[LEGACY]["socs"] == ["A100"]
    assert ops[FLASH]["parts"]["bwd"] == ["bwd_preprocess", "bwd_dv_db_dq", "bwd_dk"]
    assert ops[JTPD]["socs"] == ["H200", "cpu"]


def test_studies_count_trials_by_state(client, seeded):
    studies = {s["name"]: s for s in client.get("/api/studies").json()["items"]}
    assert studies[STUDY_MAIN]["trials"] == {"COMPLETE": MAIN_COMPLETE, "FAIL": MAIN_FAILED}
    assert studies[STUDY_CPU]["trials"] == {"COMPLETE": 1}
    assert (studies[STUDY_CPU]["interpreter"], studies[STUDY_MAIN]["interpreter"]) == (True, False)
    assert studies[STUDY_MAIN]["verdict"]["beats_default"] is True
    only_cpu = client.get("/api/studies", params={"soc": "cpu"}).json()
    assert [s["name"] for s in only_cpu["items"]] == [STUDY_CPU]
    assert client.get("/api/studies", params={"limit": 1}).json()["total"] == 2


def test_trials_of_a_study(client, seeded):
    url = f"/api/studies/{seeded.study_ids[STUDY_MAIN]}/trials"
    body = client.get(url, params={"limit": 10, "offset": 5}).json()
    assert (body["total"], body["limit"], body["offset"]) == (MAIN_COMPLETE + MAIN_FAILED, 10, 5)
    assert [t["number"] for t in body["items"]] == list(range(5, 15))
    complete = body["items"][0]
    assert complete["state"] == "COMPLETE" and complete["value"] == pytest.approx(0.026)
    assert complete["config"] == {"BLOCK_N": 32, "num_warps": 2}
    failed = body["items"][-1]
    assert (failed["state"], failed["value"], failed["category"]) == ("FAIL", None, "compile")
    assert failed["message"] == "out of resources (14)"


def test_unknown_study_is_404(client):
    response = client.get("/api/studies/999999/trials")
    assert response.status_code == 404
    assert response.json() == {"detail": "no study with id 999999"}


@pytest.fixture
def imported(monkeypatch):
    """The import stood in for: import_export records its documents."""
    calls = []

    def import_export(db, document):
        if "bad" in document:
            raise UserError("not an export document: no 'format' field")
        calls.append((db.url, document))
        return {"baselines": 1}

    monkeypatch.setattr(import_check, "import_export", import_export)
    return calls


def test_import_is_off_without_a_token_setting(client, api_token, imported):
    for unset in (None, ""):  # docker compose passes an empty AUTOTUNE_API_TOKEN
        api_token(unset)
        response = client.post(
            "/api/import", json={"format": 1}, headers={"Authorization": "Bearer x"}
        )
        assert response.status_code == 403
        assert response.json() == {"detail": "writing is disabled"}
    assert imported == []


def test_import_needs_the_right_token(client, api_token, imported):
    api_token("s3cret")
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "Basic czNjcmV0"}):
        response = client.post("/api/import", json={"format": 1}, headers=headers)
        assert response.status_code == 401, headers
        assert response.headers["www-authenticate"] == "Bearer"
    assert imported == []


def test_import_with_the_token(client, api_token, imported, seeded):
    api_token("s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    response = client.post("/api/import", json={"format": 1}, headers=auth)
    assert response.status_code == 200
    assert response.json() == {"summary": {"baselines": 1}}
    assert imported == [(seeded.url, {"format": 1})]
    malformed = client.post("/api/import", json={"bad": True}, headers=auth)
    assert malformed.status_code == 422
    assert malformed.json()["detail"][0]["msg"] == "not an export document: no 'format' field"
    assert client.post("/api/import", content=b"[1]", headers=auth).status_code == 422


def test_import_refuses_undecodable_and_oversized_bodies_with_4xx(
    client, api_token, imported, monkeypatch
):
    api_token("s3cret")
    auth = {"Authorization": "Bearer s3cret"}
    latin1 = client.post(
        "/api/import", content='{"format": "é"}'.encode("latin-1"),
        headers={**auth, "Content-Type": "text/plain"},
    )  # fmt: skip
    assert latin1.status_code == 400 and latin1.json() == {"detail": "the body is not UTF-8 text"}
    assert client.post("/api/import", content=b"{", headers=auth).status_code == 400
    monkeypatch.setenv("AUTOTUNE_IMPORT_MAX_BYTES", "64")
    settings.cache_clear()
    big = client.post("/api/import", json={"format": 1, "pad": "x" * 100}, headers=auth)
    assert big.status_code == 413 and "64 bytes" in big.json()["detail"]
    streamed = client.post(  # no Content-Length: the limit holds while reading
        "/api/import", content=(b"x" * 40 for _ in range(3)), headers=auth
    )
    assert streamed.status_code == 413
    assert imported == []


def test_the_token_is_checked_before_the_body_is_read(seeded, api_token):
    import asyncio

    api_token("s3cret")
    app, reads, sent = create_app(seeded.url, repository=False), [], []

    async def receive():
        reads.append(1)
        return {"type": "http.request", "body": b"{}" * 1000, "more_body": True}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": "/api/import", "raw_path": b"/api/import", "query_string": b"",
        "root_path": "", "client": ("127.0.0.1", 1), "server": ("testserver", 80),
        "headers": [(b"authorization", b"Bearer wrong"), (b"content-length", b"10000000")],
    }  # fmt: skip
    asyncio.run(app(scope, receive, send))
    assert sent[0]["status"] == 401 and reads == []


def test_a_fuzz_of_the_import_endpoint_finds_no_server_error(client, api_token, monkeypatch):
    """Random bytes, sizes and content types, with and without the token: never a 5xx."""
    import random

    api_token("s3cret")
    monkeypatch.setenv("AUTOTUNE_IMPORT_MAX_BYTES", "4096")
    settings.cache_clear()
    rng = random.Random(19)
    types_ = [
        "application/json",
        "text/plain",
        "application/octet-stream",
        "",
        "multipart/form-data",
    ]
    samples = [b'{"format": 1}', b'{"format": 99, "baselines": 1}', b"[]", b"null", b'"\\ud800"']
    statuses = set()
    for _ in range(300):
        if rng.random() < 0.5:
            body = rng.randbytes(rng.choice([0, 1, 7, 100, 4096, 5000]))
        else:
            body = rng.choice(samples) if rng.random() < 0.5 else b"[" * rng.randint(1, 100_000)
        headers = {"Content-Type": rng.choice(types_)}
        if rng.random() < 0.8:
            headers["Authorization"] = "Bearer s3cret"
        response = client.post("/api/import", content=body, headers=headers)
        assert response.status_code < 500, (body[:80], headers, response.text)
        statuses.add(response.status_code)
    assert {400, 401, 413, 422} <= statuses


@pytest.fixture
def export(tmp_path):
    """An untampered export (the rows of tests/test_transfer.py)."""
    from storage import open_database
    from storage.transfer import export_document

    from .test_transfer import seed as seed_rows

    source = open_database(f"sqlite:///{tmp_path / 'source.db'}")
    seed_rows(source)
    return json.loads(json.dumps(export_document(source, None, None)))


def test_import_round_trip(api_token, export, any_db):
    """The real import: an untampered export fills an empty database, whose API then shows it."""
    api_token("s3cret")
    empty = TestClient(create_app(any_db))
    response = empty.post("/api/import", json=export, headers={"Authorization": "Bearer s3cret"})
    assert response.status_code == 200, response.text
    assert response.json()["summary"]["baselines_added"] == len(export["baselines"]) > 0
    for path, section in (
        ("/api/baselines", "baselines"),
        ("/api/frozen-versions", "frozen_versions"),
    ):
        assert empty.get(path).json()["total"] == len(export[section]) > 0


def test_a_tampered_import_is_refused_naming_its_first_bad_row(api_token, export, any_db):
    """The same checks as `autotune import`: a config outside its kernel's space, with its hash
    recomputed, is answered 422 with the one line, and nothing is added."""
    from storage.models import content_hash

    api_token("s3cret")
    version = export["frozen_versions"][0]
    next(iter(version["entries"].values()))["config"]["BLOCK_ROW"] = -16
    version["content_hash"] = content_hash(version["label"], version["entries"])
    empty = TestClient(create_app(any_db))
    response = empty.post("/api/import", json=export, headers={"Authorization": "Bearer s3cret"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["msg"] == (
        "frozen_versions[0]: entries['fwd b2048_n256_d64_fp16']: BLOCK_ROW=-16 is outside "
        "[1, 2, 4, 8, 16, 32, 64, 128]"
    )
    for path in ("/api/baselines", "/api/frozen-versions", "/api/accuracy"):
        assert empty.get(path).json()["total"] == 0


def test_overview_page(client):
    response = client.get("/")
    assert response.status_code == 200 and "text/html" in response.headers["content-type"]
    html = response.text
    for frozen, gpu, _, _ in EXPECTED.values():
        assert ms(frozen) in html
        assert gpu is None or ms(gpu) in html
    assert "0.02903" in html and "0.03050" in html  # frozen and newest GPU baseline of CASE_A
    assert "regressed +8.1%" in html
    assert f"{ms(12.5)} (interpreter)" in html  # interpreter times say so
    table = html[html.index('<table class="cases">') :]
    assert "<script" not in table[: table.index("</table>")]  # the table is plain HTML
    assert '<script src="/static/plotly.min.js"></script>' in html
    assert "https://" not in html and "cdn" not in html.lower()  # the chart's script is local
    assert html.count('data-col="accuracy" class="bad"') == 3  # CASE_A, and FLASH's two parts
    assert ">FAIL 1 of 2<" in html and 'title="lse: non-finite output' in html


def test_overview_chart_per_op_and_soc(client):
    items = client.get("/api/cases", params={"limit": 1000}).json()["items"]
    chart = overview_chart([CaseOut.model_validate(item) for item in items])
    assert 'id="overview-chart"' in chart
    figure = json.loads(chart[chart.index("[{") : chart.index("}],") + 2])
    labels = [f"{JTPD} (H200)", f"{LEGACY} (A100)", f"{FLASH} (910B)"]
    speedups, ratios = figure
    # one horizontal row per op: its label on the y axis, the values along x
    assert set(speedups["y"]) == set(labels) and "cpu" not in " ".join(speedups["y"])
    jtpd = speedups["y"].index(f"{JTPD} (H200)")
    assert speedups["x"][jtpd] == pytest.approx(math.sqrt(1.072 * 1.124))
    assert ratios["x"][jtpd] == pytest.approx(math.sqrt(0.02903 / 0.0305 * 0.1904 / 0.21))
    assert overview_chart([]) is None


def test_roofline_of_the_frozen_time(client):
    cases = _cases(client)
    spec = all_ops()[JTPD]
    moved, _ = spec.traffic(spec.case(CASE_A), "fwd")
    row = cases[(JTPD, "H200", CASE_A, "fwd")]
    assert row["roofline"] == pytest.approx(moved / 0.02903e-3 / 4.27e12)
    assert row["roofline_bound"] == "memory"
    assert cases[(FLASH, "910B", CASE_FLASH, "fwd")]["roofline"] is None  # no 910B ceilings
    assert cases[(JTPD, "cpu", CASE_CPU, "fwd")]["roofline"] is None  # interpreter times


def test_op_page(client):
    html = client.get(f"/ops/{JTPD}").text
    assert '<script src="/static/plotly.min.js"></script>' in html
    assert html.count('class="chart history"') == 2  # one per study
    assert html.count('class="chart importances"') == 1
    assert "parameter importances need 10 or more completed trials; this study has 1" in html
    assert "Importances (Optuna fANOVA) from 12 completed trials" in html  # with the caveat
    assert "log2_" not in html
    assert "BLOCK_N=64, num_warps=4" in html
    assert ">M0<" in html and ">M1<" in html  # history across labels
    assert "Interpreter times: correctness only, not performance." in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert client.get(f"/ops/{LEGACY}").status_code == 200
    assert client.get("/ops/no_such_op").status_code == 404


def test_regressions_page(client):
    html = client.get("/regressions").text
    assert "1 of 2 latest checks regressed" in html
    assert CASE_A in html and "+8.1%" in html
    assert "2 outputs failed their newest verification" in html
    assert "MERE ratio 2.5 &gt; 2" in html and "non-finite output" in html
    assert "MARE ratio 12" not in html  # superseded by a newer verdict that passed


def test_plotly_is_served_locally(client):
    response = client.get("/static/plotly.min.js")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/javascript")
    assert len(response.content) > 1_000_000
