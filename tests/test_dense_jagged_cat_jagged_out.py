"""dense_jagged_cat_jagged_out (FBGEMM SLL): the port gives upstream's c and c_offsets bit for bit
on every accuracy case (the interpreter), at every program count, with no sequences, and its
checked mode refuses an a of the wrong length in one line."""

import sys

import pytest
import torch

from autotuner.backends import get_backend
from ops import get_op
from ops.ports import load_port

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from persistent_grid import base_config, check  # noqa: E402

SPEC = get_op("dense_jagged_cat_jagged_out")


def test_the_port_is_upstream_bit_for_bit(cpu):
    for case in (c for c in SPEC.cases("accuracy") if c.dtype != "float16"):
        inputs = SPEC.make_inputs(case, cpu.device)
        port, upstream = SPEC.run_port(inputs), SPEC.run_upstream(inputs, case)
        for name in SPEC.output_names:
            assert torch.equal(port[name], upstream[name]), (case.name, name)


def test_every_program_count_gives_the_classic_grids_outputs(cpu, monkeypatch):
    backend = get_backend("cpu")
    monkeypatch.setattr(load_port(SPEC.name), "_cores", lambda device: 1)
    case = SPEC.case("b6_n33_fp32", "accuracy")
    kernel = SPEC.kernel("fwd")
    config = {**base_config(SPEC, kernel, case, backend), "BLOCK_SIZE": 16}
    assert check(SPEC, kernel, case, backend, config) == {p: "" for p in (0, 1, 2, 4)}


def test_no_sequences_and_a_wrong_a(cpu):
    port = load_port(SPEC.name)
    c, c_offsets = port.dense_jagged_cat_jagged_out(
        torch.ones(0), torch.ones(0), torch.zeros(1, dtype=torch.int64), 4
    )
    assert c.numel() == 0 and c_offsets.tolist() == [0]
    with pytest.raises(ValueError, match=r"^a has 2 values; B=1 needs B$"):
        port.dense_jagged_cat_jagged_out(
            torch.ones(2), torch.ones(3), torch.tensor([0, 3]), 4, check=True
        )
