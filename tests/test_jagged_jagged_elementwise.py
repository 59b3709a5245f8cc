"""jagged_jagged_elementwise (FBGEMM's triton_jagged_add_jagged and triton_jagged_mul_jagged): the
port gives upstream's results bit for bit (the interpreter, fp32 and fp16), at every program
count, and its checked mode refuses tensors of two shapes in one line."""

import sys

import pytest
import torch

from autotuner.backends import get_backend
from ops import get_op
from ops.ports import load_port

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from persistent_grid import base_config, check  # noqa: E402

SPEC = get_op("jagged_jagged_elementwise")


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_the_port_is_upstream_bit_for_bit(dtype, cpu):
    for case in (c for c in SPEC.cases("accuracy") if c.dtype == dtype):
        inputs = SPEC.make_inputs(case, cpu.device)
        port, upstream = SPEC.run_port(inputs), SPEC.run_upstream(inputs, case)
        for name in SPEC.output_names:
            assert torch.equal(port[name], upstream[name]), (case.name, name)


@pytest.mark.parametrize("kernel", ["add", "mul"])
def test_every_program_count_gives_the_classic_grids_outputs(kernel, cpu, monkeypatch):
    backend = get_backend("cpu")
    monkeypatch.setattr(load_port(SPEC.name), "_cores", lambda device: 1)
    case = SPEC.case("n37_d40_fp32", "accuracy")
    kernel_spec = SPEC.kernel(kernel)
    config = {**base_config(SPEC, kernel_spec, case, backend), "BLOCK_ROW": 16}
    assert check(SPEC, kernel_spec, case, backend, config) == {p: "" for p in (0, 1, 2, 4)}


def test_checked_mode_refuses_two_shapes(cpu):
    port = load_port(SPEC.name)
    with pytest.raises(ValueError, match=r"^x and y must be \[N, D\] of one shape"):
        port.jagged_jagged_elementwise_add(torch.ones(3, 4), torch.ones(3, 5), check=True)
