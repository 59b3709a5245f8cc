"""The checkout as a source: from an empty database the dashboard and the JSON API show every
frozen (op, case, soc) of the performance json files, labelled as the repository's; a frozen
version of the database overrides the checkout's entry of its cases."""

from __future__ import annotations

import json
import shutil

import pytest
from fastapi.testclient import TestClient

from api.formatting import ms
from api.main import create_app
from autotuner.atk.performance_json import frozen_sections, read
from autotuner.measure.numbers import speedup_text
from core.paths import performance_json
from ops import all_ops
from storage import FrozenVersion, open_database

from .conftest import ROOT, autotune_cli
from .test_frozen_h200 import NOT_STARTED


@pytest.fixture
def empty(any_db):
    """An empty database (SQLite and PostgreSQL) and the service over it and this checkout."""
    return any_db, TestClient(create_app(any_db))


def _frozen_h200(op: str) -> dict[tuple[str, str], dict]:
    """(kernel, case) -> entry of the op's H200 frozen results in the checkout, with the label
    and date of its section."""
    sections = frozen_sections(read(performance_json(op)))
    return {
        (kernel, case): {**entry, "label": section["label"], "date": section["date"]}
        for case, by_soc in sections.items()
        if (section := by_soc.get("H200"))
        for kernel, entry in section["kernels"].items()
    }


#: Every op but those whose H200 tuning has not started (tests/test_frozen_h200.py: UNFINISHED).
TUNED_ON_H200 = [op for op in all_ops() if op not in NOT_STARTED]


def test_every_frozen_h200_result_from_an_empty_database(empty):
    _, client = empty
    items = client.get("/api/cases", params={"soc": "H200", "limit": 1000}).json()["items"]
    rows = {(i["op"], i["case_name"], k["kernel"]): (i, k) for i in items for k in i["kernels"]}
    for op in TUNED_ON_H200:
        frozen = _frozen_h200(op)
        assert frozen, f"{op} has no H200 frozen results in the checkout"
        for (kernel, case), entry in frozen.items():
            row, got = rows[(op, case, kernel)]
            assert got["config"] == entry["config"]
            assert got["median_ms"] == entry["median_ms"]
            assert row["source"] == (
                f"from the repository (frozen at {entry['date']}, {entry['label']})"
            )
            if len(row["kernels"]) == 1:  # a one-kernel part: its numbers as frozen
                assert row["speedup_over_default"] == entry["speedup_over_default"]
                assert row["gpu_baseline_ms"] == entry["gpu_baseline_ms"]
                if entry["gpu_baseline_ms"]:  # cases added by users have none
                    assert row["ratio_to_gpu"] == pytest.approx(
                        entry["median_ms"] / entry["gpu_baseline_ms"]
                    )
                    assert row["gpu_baseline_source"] == row["source"]
    ops = {o["name"]: o for o in client.get("/api/ops").json()}
    assert all("H200" in ops[op]["socs"] for op in TUNED_ON_H200)


def test_pages_show_the_repository(empty):
    _, client = empty
    overview = client.get("/").text
    assert "Nothing recorded yet" not in overview
    assert "from the repository (frozen at" in overview
    for op in all_ops():
        page = client.get(f"/ops/{op}").text
        for (kernel, _case), entry in _frozen_h200(op).items():
            assert f"{kernel}: " in page and ms(entry["median_ms"]) in page


def test_the_database_overrides_the_checkout(empty):
    url, client = empty
    op = "jagged_softmax"
    (kernel, case), entry = next(iter(_frozen_h200(op).items()))
    db = open_database(url)
    with db.sessions() as session:
        numbers = {**entry, "median_ms": entry["median_ms"] / 2}
        session.add(
            FrozenVersion(
                op=op,
                soc="H200",
                label="M2",
                content_hash="x",
                entries={f"{kernel} {case}": numbers},
            )  # fmt: skip
        )
        session.commit()
    db.engine.dispose()
    items = client.get("/api/cases", params={"op": op, "soc": "H200"}).json()["items"]
    row = next(i for i in items if i["case_name"] == case and i["part"] == kernel)
    assert row["source"] == "database" and row["label"] == "M2"
    assert row["kernels"][0]["median_ms"] == entry["median_ms"] / 2
    others = [i for i in items if i["case_name"] != case]
    assert others and all(i["source"].startswith("from the repository") for i in others)


def test_without_the_repository_nothing_is_recorded(any_db):
    client = TestClient(create_app(any_db, repository=False))
    assert client.get("/api/cases").json()["total"] == 0
    assert "Nothing recorded yet" in client.get("/").text


def test_regressions_of_an_empty_database_say_how_to_make_one(empty):
    _, client = empty
    page = client.get("/regressions").text
    assert "0 of 0" not in page
    assert "autotune baseline --op OP --soc SOC" in page and "autotune check --op OP" in page
    assert "autotune verify --op OP --soc SOC" in page


def test_a_part_frozen_in_part_shows_each_kernels_speedup_as_show_does(
    tmp_path, monkeypatch, any_db
):
    """In a copy of the ATK folders where layer_norm_mul_dropout's backward of n131072_d256_bf16
    has bwd_dx frozen on the H200 and not bwd_dw: the part has no total, and its frozen kernel
    carries the speedup `autotune show` prints for it, written alike."""
    op, case = "layer_norm_mul_dropout", "n131072_d256_bf16"
    frozen = _frozen_h200(op)
    assert ("bwd_dx", case) in frozen and ("bwd_dw", case) in frozen
    shutil.copytree(ROOT / "experimental", tmp_path / "experimental")
    path = performance_json(op, root=tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    (entry,) = [c for c in document["cases"] if c["name"] == case]
    del entry["frozen"]["H200"]["kernels"]["bwd_dw"]
    path.write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setenv("AUTOTUNE_ROOT", str(tmp_path))
    client = TestClient(create_app(any_db))
    text = speedup_text(frozen[("bwd_dx", case)]["speedup_over_default"])
    page = client.get(f"/ops/{op}").text
    assert f"{text} over its default" in page
    assert "not every kernel of this part is frozen" in page
    shown = autotune_cli("show", "--op", op, "--soc", "H200")
    (line,) = [row for row in shown.stdout.splitlines() if "bwd_dx" in row and case in row]
    assert text in line
