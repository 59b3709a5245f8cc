"""`autotune.capture`: a workload's launcher calls become user cases that `autotune run` tunes."""

import os
import subprocess
import sys

import pytest
import torch
import yaml
from sqlalchemy import select

import autotune
from autotuner.cases import store
from core.paths import cases_file
from ops import get_op
from ops.ports import load_port
from storage import StudyRecord, open_database

OP = "jagged_to_padded_dense"


def copy(port, lengths, d=8, max_len=20, **options):
    """One launcher call as a workload makes it."""
    offsets = torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()])
    values = torch.randn(int(offsets[-1]), d)
    return port.jagged_to_padded_dense(values, [offsets], [max_len], **options)


def workload(port):
    launch = port.jagged_to_padded_dense  # a reference taken before the capture still counts
    for lengths in ([5, 0, 26], [4, 1, 27], [5, 0, 30]):
        copy(port, lengths)
    copy(port, [1, 2, 3, 4])
    copy(port, [9, 9], config={"BLOCK_ROW": 8, "BLOCK_COL": 16, "num_warps": 1})  # not picked
    softmax = get_op("jagged_softmax")
    case = softmax.case("b4_n16_d20_fp32")
    softmax.run_port(softmax.make_inputs(case, torch.device("cpu")))  # forward and backward
    return launch


def test_capture_merges_calls_and_writes_the_most_frequent_first(tree):
    port = load_port(OP)
    pick = port._pick_config
    path = tree / "cases" / "my_model.yaml"
    with autotune.capture(path):
        workload(port)
    assert port._pick_config is pick  # the ports are as they were
    entries = yaml.safe_load(path.read_text())["cases"]
    assert [(e["op"], e["shape"], e["calls"]) for e in entries] == [
        (OP, {"B": 3, "max_seq_len": 20, "D": 8}, 3),
        ("jagged_softmax", {"B": 4, "max_seq_len": 16, "D": 20}, 2),
        (OP, {"B": 4, "max_seq_len": 20, "D": 8}, 1),
    ]
    first, softmax, last = entries
    assert first["kernels"] == {"fwd": 3} and softmax["kernels"] == {"bwd": 1, "fwd": 1}
    # Three calls of three sequences: an empty or short one, one of 4-5 rows, one of 26-30.
    assert first["histogram"] == {
        "edges": [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32],
        "counts": [2, 1, 0, 0, 3, 0, 0, 0, 0, 3],
    }
    assert last["histogram"] == {"edges": [1, 2, 3, 4, 6], "counts": [1, 1, 1, 1]}
    assert softmax["histogram"]["counts"][0] == 2  # b4_n16_d20's empty sequence, twice
    spec = get_op(OP)
    case = store.case_of(spec, first, "accuracy")
    # Its quantiles at frac(i * golden ratio) = 0.618, 0.236, 0.854 of the 9 sequences seen.
    assert case.name == first["name"] and case.lengths == (5, 1, 28)


def test_nothing_is_written_when_the_workload_fails(tree):
    port = load_port(OP)
    path = tree / "cases" / "failed.yaml"
    with pytest.raises(RuntimeError), autotune.capture(path):
        copy(port, [1, 2])
        raise RuntimeError("the workload broke")
    assert not path.exists() and port._pick_config.__name__ == "_pick_config"


def test_autotune_run_tunes_what_capture_wrote(tree, tmp_path):
    path, url = tree / "cases" / "my_model.yaml", f"sqlite:///{tmp_path / 'capture.db'}"
    with autotune.capture(path):
        workload(load_port(OP))
    run = subprocess.run(
        [sys.executable, "-m", "autotuner", "run", "--op", OP, "--soc", "cpu", "--trials", "2",
         "--cases-file", str(path), "--db", url],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "250"}, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    captured = [e["name"] for e in yaml.safe_load(path.read_text())["cases"] if e["op"] == OP]
    with open_database(url).sessions() as session:
        tuned = session.scalars(select(StudyRecord.case_name).order_by(StudyRecord.id)).all()
    assert tuned == captured  # the most frequent first, and only this op's
    registered = yaml.safe_load(cases_file(OP).read_text())["cases"]
    assert [e["name"] for e in registered] == captured
