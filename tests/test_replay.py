"""`benchmarks/replay_search.py` on the recorded exhaustive tables of docs/runs (search_benchmark's
and dispatch_regret's): the real sampler, seeded, with its polish, reaches the targets of issue
50; any row replays, also one whose case the op lacks."""

import json
import os
import re
import subprocess
import sys

import pytest

from .conftest import ROOT

RUNS = ROOT / "docs" / "runs"
TABLES = sorted([*RUNS.glob("*search_benchmark*.jsonl"), *RUNS.glob("*dispatch_regret*.jsonl")])
SUMMARY = re.compile(r"^(\S+:\S+): median ([\d.]+)%, worst ([\d.]+)%", re.MULTILINE)


def replay(fraction: float, *paths, options: tuple[str, ...] = ()) -> str:
    result = subprocess.run(
        [
            sys.executable,
            "benchmarks/replay_search.py",
            "--fraction",
            str(fraction),
            *options,
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def per_kernel(output: str) -> dict[str, tuple[float, float]]:
    return {name: (float(m), float(w)) for name, m, w in SUMMARY.findall(output)}


def recorded_cases() -> list[dict]:
    """The case rows that hold an exhaustive table to replay, a table dispatch_regret took over
    from an earlier run (the same table) once."""
    rows = [json.loads(line) for path in TABLES for line in path.read_text().splitlines()]
    tables = {json.dumps([r["op"], r["kernel"], r["table"]]) for r in rows if "table" in r}
    return [row for row in rows if row.get("exhaustive", {}).get("table")] + list(tables)


def case_results(output: str) -> list[float]:
    return [float(x) for x in re.findall(r"^\S+ \S+: ([\d.]+)% of the optimum", output, re.M)]


@pytest.mark.parametrize(("fraction", "median", "worst"), [(0.12, 99.0, 97.0), (0.2, 99.0, 98.0)])
def test_every_recorded_table_reaches_the_targets(fraction, median, worst):
    output = replay(fraction, *TABLES)
    kernels = per_kernel(output)
    assert set(kernels) == {
        "jagged_dense_flash_attention:fwd",
        "jagged_dense_flash_attention:bwd_dk",
        "jagged_to_padded_dense:fwd",
        "jagged_dense_bmm:fwd",
    }
    results = case_results(output)
    assert len(results) == len(recorded_cases()) >= 40
    assert sorted(results)[len(results) // 2] >= median and min(results) >= worst
    for name, (kernel_median, kernel_worst) in kernels.items():
        assert kernel_median >= median and kernel_worst >= worst, (name, output)
    assert replay(fraction, *TABLES) == output  # seeded: the same replay every time


def test_a_row_of_a_case_the_op_does_not_list_replays(tmp_path):
    rows = [json.loads(line) for line in TABLES[0].read_text().splitlines()]
    row = next(r for r in rows if "op" in r)
    # A shape no case of the op has, with lengths of its own: the same table as oracle.
    shape = {"B": 3, "max_seq_len": 256, "D": 128, "T": 128}
    row.update(case="b3_unlisted", shape=shape, dtype="bfloat16", lengths=[256, 17, 200])
    path = tmp_path / "unlisted.jsonl"
    path.write_text(json.dumps(row) + "\n")
    output = replay(0.12, path)
    assert "b3_unlisted:" in output
    assert per_kernel(output).keys() == {f"{row['op']}:{row['kernel']}"}


def test_the_polish_takes_the_budgets_last_trials_and_no_more():
    table = RUNS / "2026-11-30_M1_H200x2_search_benchmark_bwd_dk.jsonl"
    options = ("--sampler", "random", "--no-warm-starts")
    polished = replay(0.12, table, options=options)
    unpolished = replay(0.12, table, options=(*options, "--no-polish"))
    trials = re.compile(r" in (\d+) trials \((\d+) polish\)")
    assert [n for n, _ in trials.findall(polished)] == [n for n, _ in trials.findall(unpolished)]
    assert sum(int(p) for _, p in trials.findall(polished)) > 0
    assert {p for _, p in trials.findall(unpolished)} == {"0"}
