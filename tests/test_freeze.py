"""`autotune freeze` and the launchers that read what it wrote."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import select

from autotuner.atk.generated_block import BEGIN_MARKER, read_frozen
from autotuner.freeze.freeze import freeze
from autotuner.freeze.import_check import import_export
from autotuner.measure.numbers import short_number, speedup_text
from autotuner.search import runner
from autotuner.search.request import RunRequest
from autotuner.search.study import INTERPRETER_RETIMING
from core.errors import UserError
from core.paths import frozen_configs_file, performance_json, port_file
from ops import get_op
from storage import FrozenVersion, StudyRecord, open_database
from storage.transfer import export_document

from .conftest import ROOT, autotune_cli

OP, TUNED, UNTUNED = "jagged_to_padded_dense", "b4_n16_d40_fp32", "b6_n33_d7_fp32"
SPEC = get_op(OP)


#: The database of the one tuning the `tuned` tests share (per test process): a run on the
#: interpreter is the slow part, and the scratch trees it is copied into hold the same sources.
_TUNED: dict[str, Path] = {}


@pytest.fixture
def tuned(tree, tmp_path, tmp_path_factory):
    """A scratch tree whose jagged_to_padded_dense was tuned on cpu for one case, with its own
    copy of the tuning's database."""
    if "db" not in _TUNED:
        template = tmp_path_factory.mktemp("tuned") / "tune.db"
        runner.run(
            RunRequest(
                OP,
                "cpu",
                cases=[TUNED],
                trials=10,
                db_url=f"sqlite:///{template}",
                timeout_s=60,
            )
        )
        _TUNED["db"] = template
    with sqlite3.connect(_TUNED["db"]) as source, sqlite3.connect(tmp_path / "tune.db") as copy:
        source.backup(copy)  # the write-ahead log's pages included
    db = open_database(f"sqlite:///{tmp_path / 'tune.db'}")
    with db.sessions() as session:
        record = session.scalars(select(StudyRecord)).one()
    return db, record


def files():
    return [port_file(OP), performance_json(OP), frozen_configs_file("cpu", OP)]


def snapshot():
    return {path: path.read_bytes() if path.exists() else None for path in files()}


def test_freeze_writes_all_three_files_and_a_version(tuned, tmp_path):
    db, record = tuned
    result = freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    winner = record.verdict["winner"]
    assert result.label == "M1" and result.version_recorded and set(result.changed) == set(files())
    source = port_file(OP).read_text()
    entry = read_frozen(source, port_file(OP))["cpu"]["fwd"][0]
    assert entry == {
        "case": TUNED,
        "dtype": "float32",
        "shape": {"B": 4, "max_seq_len": 16, "D": 40},
        "config": winner,
    }
    document = json.loads(performance_json(OP).read_text())
    (extra,) = document["extra_cases"]  # an interpreter case, outside the performance list
    frozen = extra["frozen"]["cpu"]
    assert frozen["label"] == "M1" and frozen["kernels"]["fwd"]["config"] == winner
    numbers = frozen["kernels"]["fwd"]
    assert numbers["p20_ms"] <= numbers["median_ms"] <= numbers["p80_ms"]
    assert (
        numbers["n"] >= INTERPRETER_RETIMING["retime_rounds"] * INTERPRETER_RETIMING["retime_reps"]
    )
    assert numbers["default_config"] == {
        "BLOCK_ROW": 32,
        "BLOCK_COL": 32,
        "num_warps": 4,
        "PROGRAMS": 0,
    }
    assert numbers["study"] == record.name and numbers["environment"]["soc"] == "cpu"
    assert [c["name"] for c in document["cases"]] == [c.name for c in SPEC.cases("performance")]
    configs = json.loads(frozen_configs_file("cpu", OP).read_text())
    assert configs["frozen"]["fwd"] == [entry] and configs["label"] == "M1"
    with db.sessions() as session:
        (version,) = session.scalars(select(FrozenVersion)).all()
    assert version.label == "M1" and version.entries[f"fwd {TUNED}"]["config"] == winner
    exported = json.loads(json.dumps(export_document(db, [OP], "cpu")))  # as a file holds it
    imported = import_export(open_database(f"sqlite:///{tmp_path / 'other.db'}"), exported)
    assert imported.versions_added == 1  # its hash and config pass the import's checks
    assert (
        subprocess.run(
            [sys.executable, "-m", "ruff", "format", "--check", str(port_file(OP))],
            capture_output=True,
        ).returncode
        == 0
    )


def test_second_freeze_changes_no_byte_and_records_no_version(tuned):
    db, _ = tuned
    freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    before = snapshot()
    again = freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    assert snapshot() == before and not again.changed and not again.version_recorded
    with db.sessions() as session:
        assert len(session.scalars(select(FrozenVersion)).all()) == 1
    relabelled = freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    assert (
        relabelled.version_recorded
        and json.loads(frozen_configs_file("cpu", OP).read_text())["label"] == "M2"
    )


def test_dry_run_writes_nothing(tuned):
    db, _ = tuned
    before = snapshot()
    result = freeze(db, SPEC, "cpu", label=None, dry_run=True, force=False)
    assert snapshot() == before
    diff = result.diff()
    assert (
        f"+++ b/experimental/triton/atk_test/{OP}/npu_atk_test/{OP}.py" in diff
        and '+    "cpu": {' in diff
    )
    with db.sessions() as session:
        assert session.scalars(select(FrozenVersion)).all() == []


@pytest.mark.parametrize("damage", ["markers", "json"])
def test_damaged_files_are_refused_with_nothing_changed(tuned, damage):
    db, _ = tuned
    if damage == "markers":
        port_file(OP).write_text(port_file(OP).read_text().replace(BEGIN_MARKER, "# begin"))
        message = "markers are missing or damaged"
    else:
        performance_json(OP).write_text(performance_json(OP).read_text()[:-20])
        message = "is not valid JSON"
    before = snapshot()
    with pytest.raises(UserError, match=message):
        freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    assert snapshot() == before


def test_unverified_and_undertrained_studies_are_refused(tuned, tmp_path):
    db, record = tuned
    with db.sessions() as session:
        session.get(StudyRecord, record.id).verdict = None
        session.commit()
    before = snapshot()
    with pytest.raises(UserError, match="has no verified winner yet"):
        freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    url = f"sqlite:///{tmp_path / 'short.db'}"
    runner.run(
        RunRequest(
            OP, "cpu", kernels=None, cases=[TUNED], trials=3, db_url=url, seed=0, timeout_s=60
        )
    )
    short = open_database(url)
    with pytest.raises(
        UserError,
        match="has 3 completed trials, fewer than the minimum 8; tune more or freeze with --force",
    ):
        freeze(short, SPEC, "cpu", label=None, dry_run=False, force=False)
    assert snapshot() == before
    assert freeze(short, SPEC, "cpu", label=None, dry_run=False, force=True).changed


def test_force_leaves_out_an_open_study_and_names_it(tuned):
    db, record = tuned
    with db.sessions() as session:
        verdict = session.get(StudyRecord, record.id).verdict
        session.get(StudyRecord, record.id).verdict = None
        session.commit()
    before = snapshot()
    with pytest.raises(UserError, match="nothing to freeze"):  # the only study is open
        freeze(db, SPEC, "cpu", label=None, dry_run=False, force=True)
    assert snapshot() == before
    url = str(db.engine.url)
    runner.run(
        RunRequest(
            OP, "cpu", kernels=None, cases=[UNTUNED], trials=8, db_url=url, seed=0, timeout_s=60
        )
    )
    result = freeze(db, SPEC, "cpu", label=None, dry_run=False, force=True)
    assert [(e.kernel, e.case) for e in result.entries] == [("fwd", UNTUNED)]
    assert f"fwd {TUNED} (its study has no verified winner yet)" in result.untuned
    assert [
        e["case"] for e in read_frozen(port_file(OP).read_text(), port_file(OP))["cpu"]["fwd"]
    ] == [UNTUNED]
    # A pair frozen before without a settled study in this database stays as it was, and is
    # named as kept, not as untuned.
    with db.sessions() as session:
        session.get(StudyRecord, record.id).verdict = verdict
        untuned_study = session.scalar(select(StudyRecord).where(StudyRecord.case_name == UNTUNED))
        session.delete(untuned_study)
        session.commit()
    result = freeze(db, SPEC, "cpu", label=None, dry_run=False, force=True)
    assert [(e.kernel, e.case) for e in result.entries] == [("fwd", TUNED)]
    assert result.kept == [f"fwd {UNTUNED}"] and f"fwd {UNTUNED}" not in result.untuned
    frozen = read_frozen(port_file(OP).read_text(), port_file(OP))["cpu"]["fwd"]
    assert sorted(e["case"] for e in frozen) == sorted([TUNED, UNTUNED])


CHECK = textwrap.dedent(
    """
    import json, sys, warnings
    from autotuner.backends import get_backend
    get_backend("cpu")
    import torch
    from ops import get_op
    from ops.ports import load_port
    spec, port = get_op(sys.argv[1]), load_port(sys.argv[1])
    kernel = port._jagged_to_padded_dense_kernel
    seen = []

    class Spy:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                seen.append({k: v for k, v in kwargs.items() if k.startswith("BLOCK_")})
                return kernel[grid](*args, **kwargs)
            return launch

    port._jagged_to_padded_dense_kernel = Spy()
    report = {}
    for name in sys.argv[2:]:
        inputs = spec.make_inputs(spec.case(name), torch.device("cpu"))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = spec.run_port(inputs)["dense"]
            spec.run_port(inputs)
        exact = bool(torch.equal(out.double(), spec.reference(inputs)["dense"]))
        report[name] = {"config": seen[-1], "exact": exact, "warnings": [str(w.message) for w in caught]}
    print(json.dumps(report))
    """
)


def test_a_fresh_process_launches_with_the_frozen_config(tuned):
    db, record = tuned
    freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    result = subprocess.run(
        [sys.executable, "-c", CHECK, OP, TUNED, UNTUNED, "b6_n33_d7_bf16"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    winner = {k: v for k, v in record.verdict["winner"].items() if k.startswith("BLOCK_")}
    assert report[TUNED] == {"config": winner, "exact": True, "warnings": []}
    nearest = report[UNTUNED]  # same dtype, not tuned: the nearest frozen case, warned once
    # Its blocks fit to the shape: BLOCK_ROW no larger than max_seq_len 33 padded (64),
    # BLOCK_COL than D 7 padded (16, the least).
    fitted = {"BLOCK_ROW": min(winner["BLOCK_ROW"], 64), "BLOCK_COL": min(winner["BLOCK_COL"], 16)}
    assert nearest["config"] == fitted and nearest["exact"]
    assert (
        len(nearest["warnings"]) == 1 and f"nearest frozen case {TUNED}" in nearest["warnings"][0]
    )
    other_dtype = report["b6_n33_d7_bf16"]  # nothing frozen for bf16: the default, silently
    assert other_dtype == {
        "config": {"BLOCK_ROW": 32, "BLOCK_COL": 32},
        "exact": True,
        "warnings": [],
    }


def test_two_concurrent_freezes_leave_valid_files(tuned):
    db, _ = tuned
    command = [
        sys.executable,
        "-m",
        "autotuner",
        "freeze",
        "--op",
        OP,
        "--soc",
        "cpu",
        "--db",
        db.url,
    ]
    processes = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT
        )
        for _ in range(2)
    ]
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    read_frozen(port_file(OP).read_text(), port_file(OP))
    json.loads(performance_json(OP).read_text())
    json.loads(frozen_configs_file("cpu", OP).read_text())
    with db.sessions() as session:
        assert len(session.scalars(select(FrozenVersion)).all()) == 1
    assert not freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False).changed


def test_frozen_configs_list_kernels_in_one_order_from_the_first_freeze(tree):
    """The first freeze of a multi-kernel op writes its kernels in the order every later freeze
    reads back from the block (sorted), so re-freezing does not reorder the file."""
    from autotuner.freeze.freeze import Entry, new_texts
    from ops import get_op

    spec = get_op("multi_head_jagged_flash_attention")
    case = spec.cases("performance")[0]
    numbers = {"tuned_at": "2026-11-30"}
    entries = [
        Entry(k.name, case.name, case.dtype, dict(case.shape), k.default(case), numbers)
        for k in spec.kernels
    ]
    assert [e.kernel for e in entries] == ["fwd", "bwd_preprocess", "bwd"]
    first = json.loads(new_texts(spec, "X1", "M1", entries)[frozen_configs_file("X1", spec.name)])
    assert list(first["frozen"]) == ["bwd", "bwd_preprocess", "fwd"]


@pytest.mark.parametrize("read_only", ["kernel file", "frozen_configs folder"])
def test_a_read_only_target_changes_nothing_and_says_so_in_one_line(tuned, read_only):
    db, _ = tuned
    if read_only == "kernel file":
        target, read_only_mode = port_file(OP), 0o444
    else:
        target, read_only_mode = frozen_configs_file("cpu", OP).parent, 0o555
        target.mkdir(parents=True, exist_ok=True)
    mode = target.stat().st_mode
    os.chmod(target, read_only_mode)  # read-only by mode, which root could ignore
    before = snapshot()
    try:
        result = autotune_cli("freeze", "--op", OP, "--soc", "cpu", "--db", db.url)
        assert snapshot() == before
    finally:
        os.chmod(target, mode)
    assert result.returncode == 2, result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "nothing written" in line and str(target) in line


def test_freeze_keeps_each_files_mode(tuned):
    db, _ = tuned
    os.chmod(port_file(OP), 0o640)
    os.chmod(performance_json(OP), 0o604)
    result = freeze(db, SPEC, "cpu", label=None, dry_run=False, force=False)
    assert set(result.changed) == set(files())
    assert port_file(OP).stat().st_mode & 0o777 == 0o640
    assert performance_json(OP).stat().st_mode & 0o777 == 0o604
    umask = os.umask(0)
    os.umask(umask)
    assert frozen_configs_file("cpu", OP).stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_kernel_file_that_does_not_parse_is_one_line(tuned):
    db, _ = tuned
    port_file(OP).write_text(port_file(OP).read_text() + "\ndef broken(:\n")
    before = snapshot()
    for command in (
        ("run", "--op", OP, "--soc", "cpu", "--case", TUNED, "--trials", "2", "--db", db.url),
        ("freeze", "--op", OP, "--soc", "cpu", "--db", db.url),
    ):
        result = autotune_cli(*command)
        assert result.returncode == 2, result.stderr
        (line,) = result.stderr.strip().splitlines()
        assert "is not valid Python" in line and "line" in line
    assert snapshot() == before


def test_run_and_freeze_act_on_the_checkout_they_are_run_in(tmp_path):
    """From a subfolder of a second checkout, without AUTOTUNE_ROOT: that checkout's files
    change, the one the package was installed from does not."""
    clone = tmp_path / "clone"
    for part in ("experimental", "frozen_configs"):
        shutil.copytree(ROOT / part, clone / part, ignore=shutil.ignore_patterns("__pycache__"))
    installed = {path: path.read_bytes() for path in files() if path.exists()}
    env = {k: v for k, v in os.environ.items() if k != "AUTOTUNE_ROOT"}
    url = f"sqlite:///{tmp_path / 'clone.db'}"

    def autotune(*args, cwd):
        return subprocess.run(
            [sys.executable, "-m", "autotuner", *args], capture_output=True, text=True, cwd=cwd,
            env=env,
        )  # fmt: skip

    inside = clone / "experimental" / "triton"
    tuned = autotune("run", "--op", OP, "--soc", "cpu", "--case", TUNED, "--trials", "3",
                     "--db", url, "--quiet", cwd=inside)  # fmt: skip
    assert tuned.returncode == 0, tuned.stderr
    frozen = autotune("freeze", "--op", OP, "--soc", "cpu", "--force", "--db", url, cwd=inside)
    assert frozen.returncode == 0, frozen.stderr
    # it says that it wrote interpreter winners, and how to undo that
    assert "soc cpu: these winners are Triton interpreter timings, not performance" in frozen.stdout
    assert "undo: git checkout -- " in frozen.stdout
    assert frozen.stderr.strip().splitlines()[-1].startswith(f"next: `autotune baseline --op {OP}")
    written = json.loads((clone / "frozen_configs" / "cpu" / f"{OP}.json").read_text())
    assert [e["case"] for e in written["frozen"]["fwd"]] == [TUNED]
    assert TUNED in (clone / port_file(OP).relative_to(ROOT)).read_text()
    assert {path: path.read_bytes() for path in files() if path.exists()} == installed
    outside = autotune("freeze", "--op", OP, "--soc", "cpu", "--db", url, cwd=tmp_path)
    assert outside.returncode == 2
    (line,) = outside.stderr.strip().splitlines()
    assert "not inside an autotune checkout" in line


def test_a_new_label_records_the_entry_it_replaced_timed_side_by_side(tuned):
    """M1 froze the default config (as if an earlier study had found nothing better); the M2
    freeze of the study, whose settlement re-timed the default beside its winner, records M1's
    entry with both medians of that one interleaved run. Re-frozen as M2, the record stays; show
    and the dashboard print it."""
    db, record = tuned
    freeze(db, SPEC, "cpu", label="M1", dry_run=False, force=False)
    document = json.loads(performance_json(OP).read_text())
    (extra,) = document["extra_cases"]
    m1 = extra["frozen"]["cpu"]["kernels"]["fwd"]
    assert m1["label"] == "M1" and "previous" not in m1
    m1.update(config=record.default_config, median_ms=123.0)
    performance_json(OP).write_text(json.dumps(document))

    freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    retimed = {json.dumps(r["config"], sort_keys=True): r for r in record.verdict["retimed"]}
    before = retimed[json.dumps(record.default_config, sort_keys=True)]["median_ms"]
    after = retimed[json.dumps(record.verdict["winner"], sort_keys=True)]["median_ms"]
    entry = json.loads(performance_json(OP).read_text())["extra_cases"][0]["frozen"]["cpu"]
    m2 = entry["kernels"]["fwd"]
    assert entry["label"] == m2["label"] == "M2"
    assert m2["previous"] == {
        "label": "M1",
        "date": m1["tuned_at"],
        "config": record.default_config,
        "median_ms": 123.0,
        "retimed_ms": before,
        "retimed_now_ms": after,
        "speedup": before / after,
    }
    freeze(db, SPEC, "cpu", label="M2", dry_run=False, force=False)
    again = json.loads(performance_json(OP).read_text())["extra_cases"][0]["frozen"]["cpu"]
    assert again["kernels"]["fwd"]["previous"] == m2["previous"]

    url = f"sqlite:///{db.engine.url.database}"
    shown = autotune_cli("show", "--op", OP, "--soc", "cpu", "--db", url)
    assert shown.returncode == 0, shown.stderr
    (line,) = [row for row in shown.stdout.splitlines() if "M1 -> M2" in row]
    assert TUNED in line and short_number(123.0) in line and speedup_text(before / after) in line
    assert "interpreter times" in shown.stdout
    changed = record.default_config != record.verdict["winner"]
    assert ("unchanged" in line) != changed

    from fastapi.testclient import TestClient

    from api.main import create_app

    page = TestClient(create_app(url)).get(f"/ops/{OP}").text
    assert "interpreter; M1 -> M2: config " + ("changed)" if changed else "unchanged)") in page
