"""Tables as data (pandas): `autotune trials` from Optuna's trials and ours, `autotune report`
(frozen speedup, GPU ratio and whether the part is slower than the GPU, roofline share, geomeans)
and the benchmark scripts built on them."""

import io
import json
import math
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import optuna
import pandas as pd
import pytest

from autotuner.report.performance import (
    gpu_verdict,
    report_frame,
    speedup_summary,
    verdict_speedups,
    with_geomeans,
)
from autotuner.report.roofline import Ceilings, share, stored_ceilings
from ops import get_op
from storage import Baseline, DeviceCeiling, StudyRecord, open_database, optuna_storage

from .conftest import ROOT

OP = "jagged_to_padded_dense"
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
CEILINGS = Ceilings("H200", 4.0e12, {"float32": 400e12, "float16": 700e12, "bfloat16": 800e12})


def autotune(*args: str):
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        env={**os.environ, "COLUMNS": "250"},
        timeout=600,
    )


@pytest.fixture(scope="module")
def tuned(tmp_path_factory):
    """A database where `autotune run` tuned one small case on the interpreter."""
    url = f"sqlite:///{tmp_path_factory.mktemp('trials')}/trials.db"
    run = autotune("run", "--op", OP, "--soc", "cpu", "--case", "b1_n8_d16_fp32", "--trials", "3",
                   "--db", url, "--quiet")  # fmt: skip
    assert run.returncode == 0, run.stderr.decode()
    return url


def _optuna_trials(url: str) -> list:
    db = open_database(url)
    with db.sessions() as session:
        name = session.query(StudyRecord.name).scalar()
    return optuna.load_study(study_name=name, storage=optuna_storage(db)).get_trials()


def test_trials_as_csv_have_a_row_per_trial(tuned):
    result = autotune("trials", "--op", OP, "--db", tuned, "--format", "csv")
    assert result.returncode == 0, result.stderr.decode()
    frame = pd.read_csv(io.BytesIO(result.stdout))
    header = result.stdout.decode().splitlines()[0].split(",")
    assert header[:4] == ["kernel", "case", "soc", "number"] and "median_ms" in header
    assert {"BLOCK_ROW", "BLOCK_COL", "num_warps", "state", "category", "p20_ms", "p80_ms",
            "error"} <= set(header)  # fmt: skip
    trials = _optuna_trials(tuned)
    assert len(frame) == len(trials) and list(frame.number) == sorted(t.number for t in trials)
    for trial in trials:
        row = frame[frame.number == trial.number].iloc[0]
        assert row.state == trial.state.name
        assert row["BLOCK_ROW"] == trial.user_attrs["config"]["BLOCK_ROW"]
        if trial.state.name == "COMPLETE":
            assert row.median_ms == pytest.approx(trial.value)
            assert row.p20_ms == pytest.approx(trial.user_attrs["p20_ms"])
        elif trial.user_attrs.get("category") == "infeasible":
            assert row.category == "infeasible" and "larger than" in row.message


def test_trials_as_json_parquet_and_a_table(tuned, tmp_path):
    as_json = json.loads(autotune("trials", "--op", OP, "--db", tuned, "--format", "json").stdout)
    assert [t["number"] for t in as_json] == sorted(t.number for t in _optuna_trials(tuned))
    assert isinstance(as_json[0]["BLOCK_ROW"], int)  # config columns stay integers
    parquet = autotune("trials", "--op", OP, "--soc", "cpu", "--case", "b1_n8_d16_fp32",
                       "--db", tuned, "--format", "parquet")  # fmt: skip
    assert parquet.returncode == 0, parquet.stderr.decode()
    frame = pd.read_parquet(io.BytesIO(parquet.stdout))
    assert list(frame.number) == [t["number"] for t in as_json]
    table = autotune("trials", "--op", OP, "--db", tuned).stdout.decode()
    assert "median_ms" in table and "not performance numbers" in table
    other_soc = autotune("trials", "--op", OP, "--db", tuned, "--soc", "H200", "--format", "csv")
    assert other_soc.stdout.decode().splitlines()[1:] == []  # a header, no trial
    for args, message in [
        (["--op", "no_such_op"], "error: unknown op 'no_such_op'"),
        (["--op", OP, "--format", "xlsx"], "error: unknown --format 'xlsx'"),
    ]:
        bad = autotune("trials", "--db", tuned, *args)
        assert bad.returncode == 2 and bad.stderr.decode().startswith(message)


def _baseline(
    case: str, part: str, source: str, ms: float, soc="H200", at=T0, samples=None
) -> Baseline:
    samples = samples or [ms] * 5
    return Baseline(op=OP, soc=soc, case_name=case, part=part, source=source, label=None,
                    configs={}, median_ms=ms, p20_ms=ms, p80_ms=ms, n=len(samples),
                    samples=samples, interpreter=soc == "cpu", environment={},
                    measured_at=at)  # fmt: skip


@pytest.fixture
def measured(tmp_path):
    """Baselines of two performance cases (an older default superseded), an interpreter row
    and ceilings of the H200."""
    db = open_database(f"sqlite:///{tmp_path}/report.db")
    a, b = (c.name for c in get_op(OP).cases("performance")[:2])
    rows = [
        _baseline(a, "fwd", "port_default", 0.5),
        _baseline(a, "fwd", "port_default", 0.04, at=T0 + timedelta(hours=1)),
        _baseline(a, "fwd", "port_frozen", 0.032),
        _baseline(a, "fwd", "upstream", 0.064),
        _baseline(b, "fwd", "port_default", 0.3),
        _baseline(b, "fwd", "port_frozen", 0.2),
        _baseline(b, "fwd", "port_frozen", 9.0, soc="cpu"),  # never in a report
        DeviceCeiling(soc="H200", bandwidth=CEILINGS.bandwidth, flops=CEILINGS.flops,
                      environment={}, measured_at=T0),
    ]  # fmt: skip
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
    return db, a, b


def test_report_rows_shares_and_geomeans(measured):
    db, a, b = measured
    assert stored_ceilings(db)["H200"] == CEILINGS
    frame = report_frame(db, "H200", None, CEILINGS)
    assert list(zip(frame.case, frame.part, strict=True)) == [(a, "fwd"), (b, "fwd")]
    first = frame.iloc[0]
    assert (first.default_ms, first.frozen_ms) == (0.04, 0.032)  # the newer default
    assert first.speedup == pytest.approx(1.25) and first.gpu_ratio == pytest.approx(0.5)
    moved, flops = get_op(OP).traffic(get_op(OP).case(a), "fwd")
    assert first.moved_bytes == moved and flops == 0
    assert first.roofline == pytest.approx(moved / 32e-6 / 4.0e12) and first.bound == "memory"
    assert first.default_bandwidth_share == pytest.approx(moved / 40e-6 / 4.0e12)
    assert pd.isna(frame.iloc[1].gpu_ratio)  # no GPU baseline of that case
    summed = with_geomeans(frame)
    assert list(summed.case) == [a, b, "geomean", "geomean"] and list(summed.op)[-1] == "all"
    assert summed.iloc[2].speedup == pytest.approx(math.sqrt(1.25 * 1.5))
    assert summed.iloc[2].gpu_ratio == pytest.approx(0.5)  # the one case that has it
    spec = get_op(OP)
    assert share(spec, spec.case(a), "fwd", 0.0, CEILINGS) is None
    no_bf16 = Ceilings("H200", 4.0e12, {"float32": 400e12})
    assert share(spec, spec.case(a), "fwd", 1.0, no_bf16) is None  # a is an fp16 case


def test_slower_than_the_gpu_means_beyond_noise_however_small():
    """0.6% slower on steady samples is slower; the same medians inside a wide spread tie."""
    upstream = [0.0953 + 0.00001 * (i % 7) for i in range(60)]
    frozen = [t * 1.006 for t in upstream]
    assert gpu_verdict(frozen, upstream) == "slower"
    assert gpu_verdict(upstream, frozen) == "faster"
    spread = [0.0953 * (1 + 0.05 * ((i * 37) % 11 - 5)) for i in range(60)]
    assert gpu_verdict([t * 1.006 for t in spread], spread) == "tie"


def test_report_names_the_parts_slower_than_the_gpu(tmp_path):
    db = open_database(f"sqlite:///{tmp_path}/slower.db")
    a, b = (c.name for c in get_op(OP).cases("performance")[:2])
    noisy = [0.064 * (1 + 0.001 * (i % 5)) for i in range(30)]
    rows = [
        _baseline(a, "fwd", "port_frozen", 0.0644, samples=[t * 1.006 for t in noisy]),
        _baseline(a, "fwd", "upstream", 0.064, samples=noisy),
        _baseline(b, "fwd", "port_frozen", 0.05),
        _baseline(b, "fwd", "upstream", 0.06),
    ]
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
    frame = report_frame(db, "H200")
    assert list(frame.gpu_verdict) == ["slower", "faster"]
    md = autotune("report", "--db", db.url).stdout.decode()
    assert f"| {OP} | {a} | fwd |  | 0.0644 |  | 0.064 | 1.006 | slower |" in md
    assert (
        f"Slower than the GPU, 1 of 2 parts (one-sided Mann-Whitney p < 0.01 on the samples): "
        f"{OP} {a} fwd 1.006." in md
    )
    with db.sessions() as session:
        session.add(_baseline(a, "fwd", "port_frozen", 0.06, samples=[t * 0.9 for t in noisy],
                              at=T0 + timedelta(hours=1)))  # fmt: skip
        session.commit()
    md = autotune("report", "--db", db.url).stdout.decode()
    assert "No frozen part is slower than the GPU (2 compared;" in md


def test_report_command(measured):
    db, a, _ = measured
    md = autotune("report", "--db", db.url).stdout.decode()
    assert md.startswith("## H200\n") and "Ceilings: copy 4.00 TB/s" in md
    assert f"| {OP} | {a} | fwd | 0.04 | 0.032 | 1.250x | 0.064 | 0.500 |" in md
    assert f"| {OP} | geomean |" in md and "| all | geomean |" in md
    csv = pd.read_csv(io.BytesIO(autotune("report", "--db", db.url, "--format", "csv").stdout))
    assert list(csv.case) == [a, *csv.case[1:2], "geomean", "geomean"]
    for args, message in [
        (["--soc", "cpu"], "error: interpreter times are not performance numbers"),
        (["--format", "html"], "error: unknown --format 'html'; use md or csv"),
        (["--soc", "H200", "--measure"], "error: soc 'H200' is not on this machine"),
    ]:
        bad = autotune("report", "--db", db.url, *args)
        assert bad.returncode == 2 and bad.stderr.decode().startswith(message), bad.stderr


def test_frozen_speedups_script_prints_the_products_table():
    speedups = verdict_speedups("H200")
    assert len(speedups) > 0 and (speedups.speedup > 0).all()
    summary = speedup_summary(speedups)
    assert list(summary.op)[-1] == "all" and summary.iloc[-1].entries == len(speedups)
    script = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "frozen_speedups.py"), "--soc", "H200"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    lines = script.stdout.splitlines()
    assert lines[0] == "| op | (kernel, case) | geomean | worst | best |"
    assert len(lines) == 2 + len(summary)
    last = summary.iloc[-1]
    assert (
        lines[-1]
        == f"| all | {last.entries} | {last.geomean:.3f}x | {last.worst:.3f}x | {last.best:.2f}x |"
    )


def test_report_shows_the_frozen_port_against_torch_eager_on_any_soc(tmp_path):
    """An NPU soc: no GPU row needed; frozen / torch from the soc's own torch baseline."""
    db = open_database(f"sqlite:///{tmp_path}/torch.db")
    a, b = (c.name for c in get_op(OP).cases("performance")[:2])
    rows = [
        _baseline(a, "fwd", "port_frozen", 0.03, soc="950PR"),
        _baseline(a, "fwd", "torch", 0.06, soc="950PR"),
        _baseline(b, "fwd", "port_frozen", 0.02, soc="950PR"),  # no torch row: blank
        _baseline(a, "fwd", "torch", 0.01, soc="H200"),  # another soc's: never mixed in
    ]
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
    frame = report_frame(db, "950PR")
    assert list(frame.torch_ms[:1]) == [0.06] and frame.torch_ratio[0] == pytest.approx(0.5)
    assert pd.isna(frame.torch_ratio[1])
    assert with_geomeans(frame).iloc[-1].torch_ratio == pytest.approx(0.5)
    md = autotune("report", "--db", db.url, "--soc", "950PR").stdout.decode()
    assert f"| {OP} | {a} | fwd |  | 0.03 |  |  |  |  | 0.06 | 0.500 |" in md
