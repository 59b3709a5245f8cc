"""`autotune export` / `autotune import`: rows survive the trip (baselines, frozen versions,
verify's verdicts, device ceilings), a second import adds nothing, a version 1 file is still read,
and a bad file is refused whole with one line."""

import copy
import json
import os
from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import func, select

from autotuner.freeze.import_check import import_export
from core.errors import UserError
from storage import AccuracyResult, Baseline, DeviceCeiling, FrozenVersion, open_database
from storage.models import content_hash
from storage.transfer import export_document

from .conftest import autotune_cli

OP = "jagged_to_padded_dense"
T0 = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
TABLES = (Baseline, FrozenVersion, AccuracyResult, DeviceCeiling)


def baseline(**overrides) -> Baseline:
    values = {
        "op": OP,
        "soc": "H200",
        "case_name": "b2048_n256_d64_fp16",
        "part": "fwd",
        "source": "upstream",
        "label": None,
        "configs": {},
        "median_ms": 0.24,
        "p20_ms": 0.22,
        "p80_ms": 0.27,
        "n": 4,
        "samples": [0.27, 0.22, 0.24, 0.25],
        "interpreter": False,
        "environment": {"device": "NVIDIA H200", "driver": "570.1", "project_commit": "abc"},
        "measured_at": T0,
    }
    return Baseline(**{**values, **overrides})


def verdict(**overrides) -> AccuracyResult:
    errors = {"mare": 0.001, "mere": 0.0002, "rmse": 0.0005, "small_errors": 0, "small_total": 3,
              "finite": True}  # fmt: skip
    values = {
        "op": OP,
        "soc": "H200",
        "case_name": "b2048_n256_d64_fp16",
        "case": {"shape": {"B": 2048, "max_seq_len": 256, "D": 64}, "dtype": "float16", "kind": "performance"},
        "output": "dense",
        "configs": {"fwd": {"BLOCK_ROW": 8, "BLOCK_COL": 64, "num_warps": 4}},
        "metrics": {"port": errors, "second": errors, "ratios": {"mare": 1.0, "mere": 1.0, "rmse": None}},
        "reference": "upstream",
        "level": "L0",
        "passed": True,
        "mode": "dual",
        "reason": "",
        "toolchain": {"torch": "2.13.0", "triton": "3.5.1"},
        "verified_at": T0,
    }  # fmt: skip
    return AccuracyResult(**{**values, **overrides})


def seed(db) -> None:
    config = {"fwd": {"BLOCK_ROW": 8, "BLOCK_COL": 64, "num_warps": 4}}
    frozen = {"fwd b2048_n256_d64_fp16": {"config": config["fwd"], "median_ms": 0.029, "n": 550}}
    rows = [
        baseline(),
        baseline(source="port_frozen", label="M1", configs=config, median_ms=0.029, measured_at=T0 + timedelta(seconds=1)),
        baseline(soc="cpu", case_name="b1_n8_d16_fp32", interpreter=True, median_ms=4.5),
        baseline(op="dense_to_jagged", median_ms=0.66),
        FrozenVersion(op=OP, soc="H200", label="M1", created_at=T0,
                      content_hash=content_hash("M1", frozen), entries=frozen),
        FrozenVersion(op="dense_to_jagged", soc="H200", label="M1", created_at=T0,
                      content_hash=content_hash("M1", {}), entries={}),
        verdict(), verdict(output="dense", passed=False, reason="MARE ratio 12 > 10",
                           verified_at=T0 + timedelta(seconds=5)),
        verdict(soc="cpu", case_name="b1_n8_d16_fp32",
                configs={"fwd": {"BLOCK_ROW": 8, "BLOCK_COL": 16, "num_warps": 4}}),
        DeviceCeiling(soc="H200", bandwidth=4.27e12, flops={"float16": 6.75e14}, environment={},
                      measured_at=T0),
        DeviceCeiling(soc="910B", bandwidth=1.2e12, flops={"float16": 2.8e14}, environment={},
                      measured_at=T0),
    ]  # fmt: skip
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()


def columns(row) -> dict:
    """Every column but the id, times in UTC (SQLite hands them back naive)."""
    values = {c.name: getattr(row, c.name) for c in row.__table__.columns if c.name != "id"}
    return {
        k: (v.replace(tzinfo=UTC) if v.tzinfo is None else v) if isinstance(v, datetime) else v
        for k, v in values.items()
    }


def contents(db) -> list[list[dict]]:
    with db.sessions() as session:
        return [
            sorted((columns(r) for r in session.scalars(select(table))), key=repr)
            for table in TABLES
        ]


def counts(db, tables=(Baseline, FrozenVersion)) -> tuple[int, ...]:
    with db.sessions() as session:
        return tuple(session.scalar(select(func.count()).select_from(table)) for table in tables)


@pytest.fixture
def source(tmp_path):
    db = open_database(f"sqlite:///{tmp_path}/source.db")
    seed(db)
    return db


@pytest.fixture
def target(any_db):
    """The database imported into: SQLite and PostgreSQL."""
    return open_database(any_db)


def test_round_trip_reproduces_the_rows_and_a_second_import_adds_nothing(source, target):
    document = json.loads(json.dumps(export_document(source, None, None)))  # as a file holds it
    assert (document["format"], document["version"]) == ("autotune-export", 2)
    first = import_export(target, document)
    assert (first.baselines_added, first.versions_added, first.skipped) == (4, 2, 0)
    assert (first.accuracy_added, first.ceilings_added) == (3, 2)
    assert contents(target) == contents(source)
    second = import_export(target, document)
    assert (second.added, second.baselines_skipped, second.versions_skipped) == (0, 4, 2)
    assert (second.accuracy_skipped, second.ceilings_skipped) == (3, 2)
    assert counts(target, TABLES) == (4, 2, 3, 2)


def test_export_filters_by_op_and_soc(source):
    document = export_document(source, [OP], "H200")
    assert {(b["op"], b["soc"]) for b in document["baselines"]} == {(OP, "H200")}
    assert len(document["baselines"]) == 2
    assert [v["op"] for v in document["frozen_versions"]] == [OP]
    assert [(a["soc"], a["passed"]) for a in document["accuracy"]] == [
        ("H200", True),
        ("H200", False),
    ]
    assert [c["soc"] for c in document["ceilings"]] == ["H200"]


def test_the_same_instant_in_another_timezone_is_the_same_row(source, target):
    document = export_document(source, None, None)
    import_export(target, document)
    shifted = copy.deepcopy(document)
    plus_two = timezone(timedelta(hours=2))
    for row in shifted["baselines"]:
        row["measured_at"] = (
            datetime.fromisoformat(row["measured_at"]).astimezone(plus_two).isoformat()
        )
    assert import_export(target, shifted).added == 0
    shifted["baselines"][0]["measured_at"] = (T0 + timedelta(microseconds=1)).isoformat()
    assert import_export(target, shifted).baselines_added == 1


def test_duplicates_inside_one_file_are_added_once(source, target):
    document = export_document(source, [OP], "H200")
    document["baselines"].append(document["baselines"][0])
    result = import_export(target, document)
    assert (result.baselines_added, result.baselines_skipped) == (2, 1)


def _break(document: dict, damage: str) -> None:
    last = document["baselines"][-1]  # the earlier rows are valid: none may be written either
    if damage == "version":
        document["version"] = 3
    elif damage == "v1_with_accuracy":
        document["version"] = 1
    elif damage == "verdict_mode":
        document["accuracy"][0]["mode"] = "maybe"
    elif damage == "ceiling_bandwidth":
        document["ceilings"][0]["bandwidth"] = 0.0
    elif damage == "format":
        document["format"] = "something-else"
    elif damage == "missing":
        del last["median_ms"]
    elif damage == "string":
        last["p80_ms"] = "0.27"
    elif damage == "nan":
        last["samples"][1] = float("nan")
    elif damage == "naive_time":
        last["measured_at"] = "2026-11-30T12:00:00"
    elif damage == "nested_inf":
        document["frozen_versions"][0]["entries"]["x"] = {"median_ms": float("inf")}
    elif damage == "source":
        last["source"] = "port_tuned"
    elif damage == "not_a_list":
        document["frozen_versions"] = {}


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("version", "unsupported export version 3; this autotune reads versions 1, 2"),
        ("v1_with_accuracy", "Value error, version 1 has no 'accuracy'"),
        ("verdict_mode", "accuracy[0].mode: Input should be 'dual', 'golden' or 'single'"),
        ("ceiling_bandwidth", "ceilings[0].bandwidth: Input should be greater than 0"),
        ("format", "not an autotune export: format is 'something-else', expected 'autotune-export'"),
        ("missing", "baselines[3].median_ms: Field required"),
        ("string", "baselines[3].p80_ms: Input should be a valid number"),
        ("nan", "baselines[3].samples[1]: Input should be a finite number"),
        ("naive_time", "baselines[3].measured_at: Input should have timezone info"),
        ("nested_inf", "frozen_versions[0].entries: Value error, non-finite number inf"),
        ("source", "baselines[3].source: Input should be 'upstream', 'upstream_tma', 'torch', 'port_default' or 'port_frozen'"),
        ("not_a_list", "frozen_versions: Input should be a valid list"),
    ],
)  # fmt: skip
def test_a_malformed_document_is_refused_with_nothing_written(source, target, damage, message):
    document = export_document(source, None, None)
    _break(document, damage)
    with pytest.raises(UserError) as caught:
        import_export(target, document)
    assert str(caught.value) == message
    assert counts(target, TABLES) == (0, 0, 0, 0)


def test_a_version_1_file_is_still_read(source, target):
    document = export_document(source, None, None)
    del document["accuracy"], document["ceilings"]
    document["version"] = 1
    result = import_export(target, document)
    assert (result.baselines_added, result.versions_added, result.accuracy_added) == (4, 2, 0)
    assert counts(target, TABLES) == (4, 2, 0, 0)


def test_cli_round_trip_and_one_line_errors(source, tmp_path):
    target = open_database(f"sqlite:///{tmp_path}/target.db")  # the import itself: above
    file = tmp_path / "out" / "export.json"
    missing = autotune_cli("export", "--op", OP, "--db", source.url, str(file))
    assert missing.returncode == 2 and not file.parent.exists()  # a missing folder is refused
    assert missing.stderr.splitlines() == [
        f"error: cannot write {file}: folder {file.parent} does not exist"
    ]
    file.parent.mkdir()
    exported = autotune_cli("export", "--op", OP, "--soc", "H200", "--db", source.url, str(file))
    assert exported.returncode == 0, exported.stderr
    assert (
        "exported 2 baselines and 1 frozen versions, 2 accuracy verdicts and 1 device ceilings"
        in exported.stdout
    )
    assert os.listdir(file.parent) == ["export.json"]  # no temporary file left behind
    imported = autotune_cli("import", str(file), "--db", target.url)
    assert imported.returncode == 0, imported.stderr
    assert (
        "2 baselines added, 0 skipped; 1 frozen versions added, 0 skipped; 2 accuracy verdicts "
        "added, 0 skipped; 1 device ceilings added, 0 skipped" in imported.stdout
    )
    again = autotune_cli("import", str(file), "--db", target.url)
    assert "0 baselines added, 2 skipped; 0 frozen versions added, 1 skipped; 0 acc" in again.stdout

    broken = tmp_path / "broken.json"
    broken.write_text(file.read_text()[:-40])
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({**json.loads(file.read_text()), "version": 7}))
    tampered = tmp_path / "tampered.json"
    document = json.loads(file.read_text())
    _tamper(document, "value_outside_the_space")
    tampered.write_text(json.dumps(document))
    for path, message in [
        (broken, f"error: {broken} is not valid JSON: "),
        (wrong, "error: unsupported export version 7; this autotune reads versions 1, 2"),
        (tampered, f"error: frozen_versions[0]: entries['{ROWS}']: BLOCK_ROW=24 is outside "),
        (tmp_path / "absent.json", f"error: cannot read {tmp_path / 'absent.json'}: "),
    ]:
        refused = autotune_cli("import", str(path), "--db", target.url)
        assert refused.returncode == 2
        assert refused.stderr.startswith(message) and len(refused.stderr.splitlines()) == 1
    assert counts(target) == (2, 1)

    unknown = autotune_cli(
        "export", "--op", "no_such_op", "--db", source.url, str(tmp_path / "x.json")
    )
    assert unknown.returncode == 2 and unknown.stderr.startswith("error: unknown op 'no_such_op'")
    assert not (tmp_path / "x.json").exists()


def _rehash(version: dict) -> None:
    """Tampering that also recomputes the hash, as a careful forger would."""
    version["content_hash"] = content_hash(version["label"], version["entries"])


def _tamper(document: dict, kind: str) -> None:
    version = document["frozen_versions"][0]
    entry = version["entries"]["fwd b2048_n256_d64_fp16"]
    if kind == "value_outside_the_space":
        entry["config"]["BLOCK_ROW"] = 24
    elif kind == "negative_value":
        entry["config"]["BLOCK_ROW"] = -16
    elif kind == "unknown_key":
        entry["config"]["BLOCK_FOO"] = 8
    elif kind == "over_a_constraint":
        entry["config"]["BLOCK_COL"] = 128  # D is 64
    elif kind == "baseline_config":
        document["baselines"][3]["configs"]["fwd"]["num_warps"] = 3  # the port_frozen row
    elif kind == "unknown_kernel":
        version["entries"]["bwd b2048_n256_d64_fp16"] = version["entries"].pop(
            "fwd b2048_n256_d64_fp16"
        )
    elif kind == "unknown_case":
        document["accuracy"][0]["case_name"] = "b3_n3_d3_fp32"
    elif kind == "unknown_op":
        document["baselines"][0]["op"] = "no_such_op"
    elif kind == "unknown_soc":
        document["ceilings"][0]["soc"] = "H300"
    elif kind == "non_positive_time":
        entry["median_ms"] = 0.0
    elif kind == "negative_sample":
        document["baselines"][2]["samples"][0] = -4.5
    elif kind == "non_positive_flops":
        document["ceilings"][0]["flops"]["float16"] = -1.0
    if kind != "content_not_matching_its_hash":
        _rehash(version)
    else:
        entry["config"]["BLOCK_ROW"] = 16


ROWS = "fwd b2048_n256_d64_fp16"


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("value_outside_the_space", f"frozen_versions[0]: entries['{ROWS}']: BLOCK_ROW=24 is outside [1, 2, 4, 8, 16, 32, 64, 128]"),
        ("negative_value", f"frozen_versions[0]: entries['{ROWS}']: BLOCK_ROW=-16 is outside [1, 2, 4, 8, 16, 32, 64, 128]"),
        ("unknown_key", f"frozen_versions[0]: entries['{ROWS}']: BLOCK_FOO is not a tunable of fwd on H200; its tunables: BLOCK_ROW, BLOCK_COL, num_warps, PROGRAMS"),
        ("over_a_constraint", f"frozen_versions[0]: entries['{ROWS}']: BLOCK_COL=128 is larger than D padded to 64"),
        ("baseline_config", "baselines[3]: configs['fwd']: num_warps=3 is outside [1, 2, 4, 8]"),
        ("unknown_kernel", "frozen_versions[0]: entries['bwd b2048_n256_d64_fp16']: unknown kernel 'bwd' for jagged_to_padded_dense; valid: fwd"),
        ("unknown_case", "accuracy[0]: unknown case 'b3_n3_d3_fp32' for jagged_to_padded_dense; valid: "),
        ("unknown_op", "baselines[0]: unknown op 'no_such_op'; known ops: "),
        ("unknown_soc", "ceilings[0]: unknown soc 'H300'; known socs: cpu, 950PR, "),
        ("non_positive_time", f"frozen_versions[0]: entries['{ROWS}']: median_ms: 0.0 is not positive"),
        ("negative_sample", "baselines[2]: samples[0]: -4.5 is not positive"),
        ("non_positive_flops", "ceilings[0]: flops.float16: -1.0 is not positive"),
        ("content_not_matching_its_hash", "frozen_versions[0].content_hash: "),
    ],
)  # fmt: skip
def test_a_tampered_export_is_refused_whole_with_nothing_added(source, target, kind, message):
    document = json.loads(json.dumps(export_document(source, None, None)))
    _tamper(document, kind)
    with pytest.raises(UserError) as caught:
        import_export(target, document)
    assert str(caught.value).startswith(message)
    assert len(str(caught.value).splitlines()) == 1
    assert counts(target, TABLES) == (0, 0, 0, 0)


def test_a_non_finite_number_is_refused_with_nothing_added(source, target):
    document = json.loads(json.dumps(export_document(source, None, None)))
    document["ceilings"][0]["bandwidth"] = float("inf")
    with pytest.raises(
        UserError, match=r"^ceilings\[0\]\.bandwidth: Input should be a finite number$"
    ):
        import_export(target, document)
    assert counts(target, TABLES) == (0, 0, 0, 0)


def test_the_repositorys_frozen_configs_lie_in_their_spaces(target):
    """Every config frozen in `frozen_configs/` passes the import's check (none is refused)."""
    from ops import get_op

    from .conftest import ROOT

    entries = {}
    for path in sorted((ROOT / "frozen_configs").glob("*/*.json")):
        frozen = json.loads(path.read_text())
        for kernel, cases in frozen["frozen"].items():
            for case in cases:
                entries[f"{kernel} {case['case']}"] = {"config": case["config"], "median_ms": 1.0}
        get_op(frozen["op"])
        version = {"op": frozen["op"], "soc": frozen["soc"], "label": "M1",
                   "created_at": T0.isoformat(), "entries": entries}  # fmt: skip
        _rehash(version)
        document = {"format": "autotune-export", "version": 2, "exported_at": T0.isoformat(),
                    "baselines": [], "frozen_versions": [version]}  # fmt: skip
        import_export(target, document)
        entries = {}


def test_a_recorded_export_still_imports(target):
    """A real export (an H200 M1 freeze, docs/runs/): its hashes recomputed, its configs checked."""
    from .conftest import ROOT

    document = json.loads((ROOT / "docs/runs/2026-11-30_M1_H200_export.json").read_text())
    result = import_export(target, document)
    assert (result.baselines_added, result.versions_added) == (74, 3)


def test_upstreams_default_passes_where_a_constraint_would_refuse_another_config(source, target):
    """Upstream's default runs as it is (BLOCK_COL=32 over a D of 16): a row at it is no
    tampering; the same block beside another BLOCK_ROW is."""
    document = json.loads(json.dumps(export_document(source, None, None)))
    (verdict_row,) = [row for row in document["accuracy"] if row["soc"] == "cpu"]
    verdict_row["configs"] = {"fwd": {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4}}
    refused = copy.deepcopy(document)
    refused["accuracy"][document["accuracy"].index(verdict_row)]["configs"]["fwd"]["BLOCK_ROW"] = 16
    with pytest.raises(UserError, match=r"BLOCK_COL=32 is larger than D padded to 16$"):
        import_export(target, refused)
    assert import_export(target, document).accuracy_added == 3
