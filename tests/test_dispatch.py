"""The launchers' pick for shapes nobody froze, and the benchmark that measures what it costs."""

import json
import shutil
import subprocess
import sys
import warnings

import pytest
import torch

from autotuner.atk.generated_block import replace_block
from autotuner.freeze.freeze import freeze
from autotuner.search import runner
from autotuner.search.request import RunRequest
from core.paths import port_file
from ops import get_op
from ops.ports import load_port
from storage import open_database

from .conftest import ROOT

OP = "jagged_to_padded_dense"
SHAPE = {"B": 64, "max_seq_len": 256, "D": 64}


def entry(case, dtype, shape, block_row):
    return {
        "case": case,
        "dtype": dtype,
        "shape": shape,
        "config": {"BLOCK_ROW": block_row, "BLOCK_COL": 64, "num_warps": 4},
    }


FROZEN = {
    "cpu": {
        "fwd": [
            entry("b64_n256_d64_bf16", "bfloat16", SHAPE, 8),
            entry("b64_n2048_d64_fp16", "float16", {**SHAPE, "max_seq_len": 2048}, 16),
            entry("b8_n32_d8_fp16", "float16", {"B": 8, "max_seq_len": 32, "D": 8}, 32),
            entry("b64_n256_d64_fp32", "float32", {**SHAPE, "B": 4096}, 64),
        ]
    }
}


@pytest.fixture
def port(tree):
    path = port_file(OP)
    path.write_text(replace_block(path.read_text(), FROZEN, path))
    return load_port(OP)


def benchmark():
    """benchmarks/dispatch_regret.py as a module (benchmarks/ is not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import dispatch_regret
    finally:
        sys.path.pop(0)
    return dispatch_regret


def pick(port, shape, dtype):
    port._WARNED.clear()  # the nearest-case warning is said once per kernel and soc
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        config = port._pick("cpu", "fwd", shape, dtype, {"BLOCK_ROW": 1})
    return config["BLOCK_ROW"], [str(w.message) for w in caught]


def test_a_dtype_of_the_same_element_size_is_a_candidate_one_doubling_further(port):
    # float16 at the bfloat16 case's shape: that case (0 + 1) beats the float16 ones (3, 8).
    assert pick(port, SHAPE, "float16")[0] == 8
    # Two doublings from the float16 case, one from the bfloat16 case (1 + 1): the tie goes to
    # the float16 one.
    assert pick(port, {**SHAPE, "max_seq_len": 512}, "float16")[0] == 16
    block, said = pick(port, {**SHAPE, "max_seq_len": 128}, "bfloat16")
    assert block == 8 and "nearest frozen case b64_n256_d64_bf16" in said[0]
    # float32 tiles are twice as large: 16-bit cases are no candidates, its own case is.
    assert pick(port, SHAPE, "float32")[0] == 64
    assert pick(port, SHAPE, "float64")[0] == 1  # no dtype like it: the default


def test_exact_matches_stay_exact(port):
    assert pick(port, SHAPE, "bfloat16") == (8, [])
    assert pick(port, {"B": 8, "max_seq_len": 32, "D": 8}, "float16") == (32, [])


def test_the_launcher_runs_what_the_pick_says(port):
    values, offsets = torch.randn(10, 8, dtype=torch.float16), torch.tensor([0, 3, 10])
    seen = []
    real = port._split_config
    port._split_config = lambda config, device: seen.append(config) or real(config, device)
    with pytest.warns(UserWarning, match="nearest frozen case b8_n32_d8_fp16"):
        port.jagged_to_padded_dense(values, [offsets], [16])
    # The nearest case's config (BLOCK_ROW 32, BLOCK_COL 64), its blocks fit to max_seq_len 16
    # and D 8 padded to 16.
    assert seen == [{"BLOCK_ROW": 16, "BLOCK_COL": 16, "num_warps": 4}]


def test_the_benchmark_names_the_nearest_case_on_every_pick(port):
    """The block warns once per kernel and soc; the benchmark still names each pick's source."""
    current_pick = benchmark().current_pick
    default = {"BLOCK_ROW": 1}
    for max_seq_len in (128, 64):  # both nearest to the bfloat16 case, one warning apart
        shape = {**SHAPE, "max_seq_len": max_seq_len}
        config, source = current_pick(port, "cpu", "fwd", shape, "bfloat16", default)
        assert (config["BLOCK_ROW"], source) == (8, "b64_n256_d64_bf16")
    assert current_pick(port, "cpu", "fwd", SHAPE, "bfloat16", default)[1] == "b64_n256_d64_bf16"
    assert current_pick(port, "cpu", "fwd", SHAPE, "float64", default) == (default, "default")


def test_dispatch_regret_runs_end_to_end_on_the_interpreter(tree, tmp_path):
    """The H200 benchmark's script, checked with tiny settings: its times mean nothing here."""
    before = tmp_path / "before"  # the checkout as it was before the freeze: nothing frozen
    shutil.copytree(tree / "experimental", before / "experimental")
    url = f"sqlite:///{tmp_path / 'tuned.db'}"
    runner.run(
        RunRequest(
            OP,
            "cpu",
            cases=["b4_n16_d40_bf16"],
            trials=3,
            db_url=url,
            timeout_s=120,
        )
    )
    freeze(open_database(url), get_op(OP), "cpu", label=None, dry_run=False, force=True)
    out = tmp_path / "out"
    script_path = str(ROOT / "benchmarks" / "dispatch_regret.py")
    command = [sys.executable, script_path, "--soc", "cpu", "--smoke", "--target", f"{OP}:fwd",
               "--shapes", "3", "--which", "0,2", "--seed", "3", "--trials", "2", "--rounds", "1",
               "--reps", "2", "--before", str(before)]  # fmt: skip
    result = subprocess.run(
        [*command, "--out", str(out)], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = (out / "dispatch_regret.jsonl").read_text().splitlines()
    header, rows = json.loads(lines[0])["header"], [json.loads(line) for line in lines[1:]]
    assert "not performance" in header["smoke"] and len(rows) == 2
    script = benchmark()
    drawn = script.held_out(get_op(OP), script.frozen_entries(OP, "cpu")["fwd"], "accuracy", 3, 3)
    assert [row["case"] for row in rows] == [drawn[0].name, drawn[2].name]  # --which 0,2
    for row in rows:
        assert row["case"] not in {"b4_n16_d40_bf16"} and row["interpreter"]
        assert row["complete"] >= 1 and row["optimum_ms"] > 0
        assert len(row["table"]) == row["complete"]
        assert row["table"][0][1] == row["optimum_trial_ms"] == min(ms for _, ms in row["table"])
        for side in ("before", "after"):
            assert row[side]["regret"] == row[side]["median_ms"] / row["optimum_ms"] - 1
        assert row["before"]["from"] == "default"  # nothing was frozen in the earlier checkout
        frozen_sibling = row["dtype"] in ("bfloat16", "float16")
        assert row["after"]["from"] == ("b4_n16_d40_bf16" if frozen_sibling else "default")
    assert {row["dtype"] for row in rows} & {"bfloat16", "float16"}  # the seed draws one
    report = subprocess.run([sys.executable, script_path, "--report", str(out / "dispatch_regret.jsonl")],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert f"| {OP}:fwd | 2 |" in report and "not performance numbers" in report

    # Re-timed against the recorded optima: no space is measured again.
    again = tmp_path / "again"
    recorded = ["--optimum-from", str(out / "dispatch_regret.jsonl")]
    result = subprocess.run([*command, "--out", str(again), *recorded], capture_output=True,
                            text=True, timeout=900)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    retimed = [
        json.loads(line) for line in (again / "dispatch_regret.jsonl").read_text().splitlines()[1:]
    ]
    assert [(r["case"], r["optimum"], r["table"]) for r in retimed] == [
        (r["case"], r["optimum"], r["table"]) for r in rows
    ]
    assert {r["optimum_from"] for r in retimed} == {"dispatch_regret.jsonl"}
    assert not (again / "dispatch_regret.db").exists()
