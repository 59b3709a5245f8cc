"""batched_dense_vec_jagged_2d_matmul (FBGEMM's Triton op): the port agrees with upstream in fp32
(the interpreter; both add in fp32, the order differs) with BLOCK_L rows a step, and gives the
classic grid's outputs at every program count."""

import sys

import torch

from autotuner.backends import get_backend
from ops import get_op
from ops.ports import load_port

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from persistent_grid import base_config, check  # noqa: E402

SPEC = get_op("batched_dense_vec_jagged_2d_matmul")


def test_the_port_agrees_with_upstream(cpu):
    case = SPEC.case("b4_n16_h2_d40_fp32", "accuracy")
    inputs = SPEC.make_inputs(case, cpu.device)
    upstream = SPEC.run_upstream(inputs, case)["out"]
    for config in (None, {"BLOCK_L": 4, "BLOCK_D": 16, "num_warps": 4}):
        port = SPEC.launch("fwd", inputs, config)["out"]
        assert torch.allclose(port, upstream, rtol=1e-5, atol=1e-5), config
    assert torch.count_nonzero(upstream[:2]) == 0  # the empty first sequence's heads


def test_every_program_count_gives_the_classic_grids_outputs(cpu, monkeypatch):
    backend = get_backend("cpu")
    monkeypatch.setattr(load_port(SPEC.name), "_cores", lambda device: 1)
    case = SPEC.case("b4_n16_h2_d40_fp32", "accuracy")
    kernel = SPEC.kernel("fwd")
    config = {**base_config(SPEC, kernel, case, backend), "BLOCK_L": 8, "BLOCK_D": 16}
    assert check(SPEC, kernel, case, backend, config) == {p: "" for p in (0, 1, 2, 4)}
