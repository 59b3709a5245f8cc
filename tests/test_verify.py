"""`autotune verify` at scale: rows streamed as cases finish, N processes, the nearest frozen case
said once and counted, every verdict stored and served by /api/accuracy."""

import io
import math
import os
import subprocess
import sys

import pytest
from fastapi.testclient import TestClient
from rich.console import Console

from api.main import create_app
from autotuner.atk.generated_block import read_frozen, replace_block
from autotuner.verify import runner
from autotuner.verify.report import VerifyReport
from autotuner.verify.verify import PHASES, environment, verify_case
from core.paths import port_file
from ops import get_op

OP = "jagged_to_padded_dense"


def autotune(*args: str, root=None):
    env = {**os.environ, "COLUMNS": "250"}
    if root is not None:
        env["AUTOTUNE_ROOT"] = str(root)
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def test_verify_stores_rows_the_api_returns(tmp_path):
    url = f"sqlite:///{tmp_path}/verify.db"
    result = autotune("verify", "--op", OP, "--soc", "cpu", "--db", url)
    assert result.returncode == 0, result.stdout + result.stderr
    cases = get_op(OP).cases("accuracy")
    assert f"stored {len(cases)} verdicts in {url}" in result.stdout
    body = TestClient(create_app(url)).get("/api/accuracy", params={"op": OP}).json()
    assert body["total"] == len(cases)
    assert {a["case_name"] for a in body["items"]} == {c.name for c in cases}
    for item in body["items"]:
        assert item["passed"] and item["soc"] == "cpu" and item["output"] == "dense"
        assert item["reference"] == "upstream" and item["level"] == "L0"
        assert set(item["configs"]["fwd"]) == {"BLOCK_ROW", "BLOCK_COL", "num_warps"}
        assert item["metrics"]["port"]["finite"] and item["metrics"]["ratios"]["mare"] == 1.0
        assert item["toolchain"]["triton"] and item["toolchain"]["project_commit"]


def test_two_processes_give_the_same_verdicts_and_say_the_nearest_case_once(tree, tmp_path):
    """With one fp32 case frozen on cpu, every other fp32 case takes its config: each worker's
    launcher warns once, and the run says it once and counts it."""
    spec = get_op(OP)
    frozen_case = spec.case("b1_n8_d16_fp32")
    path = port_file(OP)
    entry = {"case": frozen_case.name, "dtype": "float32", "shape": frozen_case.shape,
             "config": {"BLOCK_ROW": 16, "BLOCK_COL": 16, "num_warps": 2}}  # fmt: skip
    source = path.read_text()
    path.write_text(
        replace_block(source, {**read_frozen(source, path), "cpu": {"fwd": [entry]}}, path)
    )
    url = f"sqlite:///{tmp_path}/jobs.db"
    runs = {jobs: autotune("verify", "--op", OP, "--soc", "cpu", "--db", url, "--jobs", jobs,
                           root=tree) for jobs in ("1", "2")}  # fmt: skip
    for jobs, run in runs.items():
        assert run.returncode == 0, run.stdout + run.stderr
        lines = run.stdout.strip().splitlines()
        assert lines[-1].endswith(f"with {jobs} process" + ("es" if jobs == "2" else ""))
        assert "; 1 kernel(s) took the nearest frozen case (notes above)" in lines[-1]
        notes = [line for line in lines if line.startswith("note: ")]
        assert len(notes) == 1 and notes[0].startswith(f"note: {OP} fwd: no config frozen on cpu")
        assert "nearest frozen case" not in run.stderr  # the launchers' warnings were taken in
    rows = {jobs: sorted(line for line in run.stdout.splitlines() if line.startswith(OP))
            for jobs, run in runs.items()}  # fmt: skip
    assert rows["1"] == rows["2"] and len(rows["1"]) == len(spec.cases("accuracy"))
    body = TestClient(create_app(url)).get("/api/accuracy", params={"case": "b4_n16_d40_fp32"})
    assert [a["configs"]["fwd"] for a in body.json()["items"]] == [entry["config"]] * 2


def test_the_port_runs_checked_and_the_environment_is_left_as_it_was(cpu, monkeypatch):
    spec = get_op(OP)
    seen = []
    real = type(spec).run_port
    monkeypatch.setattr(
        type(spec), "run_port",
        lambda self, inputs, configs=None: seen.append(os.environ.get("AUTOTUNE_CHECK"))
        or real(self, inputs, configs),
    )  # fmt: skip
    monkeypatch.delenv("AUTOTUNE_CHECK", raising=False)
    verify_case(spec, spec.cases("accuracy")[0], cpu, "L0")
    assert seen == ["1"] and "AUTOTUNE_CHECK" not in os.environ
    monkeypatch.setenv("AUTOTUNE_CHECK", "0")
    verify_case(spec, spec.cases("accuracy")[0], cpu, "L0")
    assert seen == ["1", "1"] and os.environ["AUTOTUNE_CHECK"] == "0"


def test_each_case_is_printed_as_it_finishes(cpu):
    """Rows come before the summary, one case at a time; the summary says where time went."""
    spec = get_op(OP)
    buffer = io.StringIO()
    console = Console(file=buffer, width=250, force_terminal=False)
    cases = spec.cases("accuracy")[:2]
    with VerifyReport(console, "title", len(cases), jobs=1, profile=True) as report:
        first = verify_case(spec, cases[0], cpu, "L0")
        report.add(first)
        assert cases[0].name in buffer.getvalue() and cases[1].name not in buffer.getvalue()
        report.add(verify_case(spec, cases[1], cpu, "L0"))
    report.summary("stored 2 verdicts")
    text = buffer.getvalue()
    assert set(first.seconds) >= set(PHASES) - {"compile"}  # the interpreter compiles nothing
    assert "seconds per op and phase" in text and "the 10 slowest cases" in text
    assert "time in cases, summed over the processes: inputs" in text
    assert text.strip().splitlines()[-1].startswith("2 outputs of 2 cases: 2 passed, 0 failed")
    assert "\x1b[" not in text  # no progress bar or colour where the output is not a terminal


def test_workers_are_bound_one_device_each(monkeypatch):
    class FakeGpu:
        kind, soc = "cuda", "H200"

    monkeypatch.setattr(runner, "device_indices", lambda backend: [0, 2])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 32)
    assert runner.device_slots(FakeGpu()) == ["0", "2"]
    assert runner.default_jobs(FakeGpu()) == 8  # verify_jobs_per_device (4) on each
    monkeypatch.setattr(runner.os, "cpu_count", lambda: 6)
    assert runner.default_jobs(FakeGpu()) == 6  # never more processes than cores
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,5,6")  # torch's index 2 is the host's GPU 6
    assert runner.device_slots(FakeGpu()) == ["4", "6"]
    with environment("CUDA_VISIBLE_DEVICES", "6"):
        assert os.environ["CUDA_VISIBLE_DEVICES"] == "6"
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "4,5,6"


def test_the_largest_cases_are_handed_out_first():
    spec = get_op(OP)
    todo = [(spec, case) for case in spec.cases("accuracy") + spec.cases("performance")]
    order = [todo[i][1] for i in runner.largest_first(todo)]
    sizes = [math.prod(case.shape.values()) for case in order]
    assert sizes == sorted(sizes, reverse=True) and order[0].kind == "performance"
    assert sorted(runner.largest_first(todo)) == list(range(len(todo)))


def test_default_jobs_on_the_interpreter_is_one(cpu):
    assert runner.default_jobs(cpu) == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--jobs", "0"], "error: --jobs must be at least 1, not 0"),
        (
            ["--db", "postgresql+psycopg://nobody@127.0.0.1:5999/none"],
            "error: cannot reach the database",
        ),
    ],
)
def test_bad_options_are_one_line_and_nothing_runs(args, message):
    result = autotune("verify", "--op", OP, "--soc", "cpu", *args)
    assert result.returncode == 2 and result.stderr.startswith(message), result.stderr
    assert OP not in result.stdout
