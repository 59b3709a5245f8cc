"""jagged_self_substraction_jagged_out (FBGEMM SLL): the port gives upstream's differences bit for
bit on the fp32 accuracy cases (the interpreter), also with column blocks narrower than a row and
several rows a program, and at every program count (no timed call reads a device value:
tests/test_host_sync.py)."""

import sys

import torch

from autotuner.backends import get_backend
from ops import get_op
from ops.ports import load_port

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from persistent_grid import base_config, check  # noqa: E402

SPEC = get_op("jagged_self_substraction_jagged_out")


def test_the_port_is_upstream_bit_for_bit(cpu):
    for case in (c for c in SPEC.cases("accuracy") if c.dtype == "float32"):
        inputs = SPEC.make_inputs(case, cpu.device)
        upstream = SPEC.run_upstream(inputs, case)["b"]
        for config in (None, {"BLOCK_M": 4, "BLOCK_N": 16, "num_warps": 4}):
            port = SPEC.launch("fwd", inputs, config)["b"]
            assert torch.equal(port, upstream), (case.name, config)


def test_every_program_count_gives_the_classic_grids_outputs(cpu, monkeypatch):
    backend = get_backend("cpu")
    monkeypatch.setattr(load_port(SPEC.name), "_cores", lambda device: 1)
    case = SPEC.case("b3_n40_fp32", "accuracy")
    kernel = SPEC.kernel("fwd")
    config = {**base_config(SPEC, kernel, case, backend), "BLOCK_M": 8, "BLOCK_N": 16}
    assert check(SPEC, kernel, case, backend, config) == {p: "" for p in (0, 1, 2, 4)}
