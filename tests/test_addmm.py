"""addmm (recsys-examples' triton_addmm): the port's forms the op's cases do not run (no SiLU, a
[N, T] bias, z not kept), its programs walking several tiles, and its autograd Function."""

import pytest
import torch

from ops import get_op
from ops.ports import load_port

SPEC = get_op("addmm")


@pytest.fixture
def port(cpu):
    return load_port("addmm")


def inputs(name="n37_d100_t72_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-4, atol=1e-5)


def test_without_silu_only_z_is_stored(port):
    x, w, b = (inputs()[k] for k in ("x", "weight", "bias"))
    z, y = port.addmm_fwd(x, w, b, silu=False)
    assert y is None and close(z, SPEC.reference(inputs())["z"])
    z, y = port.addmm_fwd(x, w, b, silu=True, keep_unfused_out=False)
    assert z is None and close(y, SPEC.reference(inputs())["y"])


def test_a_bias_of_rows_is_added_per_row(port):
    x, w = inputs()["x"], inputs()["weight"]
    bias = torch.randn(x.size(0), w.size(1))
    z, _ = port.addmm_fwd(x, w, bias, check=True)
    assert close(z, x.double() @ w.double() + bias.double())
    with pytest.raises(ValueError, match="bias must be"):
        port.addmm_fwd(x, w, bias[:, :5], check=True)


def test_programs_walk_every_tile_once_in_group_order(port, monkeypatch):
    """Fewer programs than tiles (here 2 for 3 x 2 tiles, GROUP_M 2): each output tile is
    computed once, as with one program per tile."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 2)
    case_inputs = inputs("n130_d48_t40_fp32")
    config = {"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 16, "GROUP_M": 2}
    out = SPEC.launch("fwd", case_inputs, config)
    golden = SPEC.reference(case_inputs)
    assert close(out["z"], golden["z"]) and close(out["y"], golden["y"])


@pytest.mark.parametrize("silu", [False, True])
def test_the_autograd_function_is_upstreams_call(port, silu):
    """addmm(input, mat1, mat2, silu), as upstream's triton_addmm: gradients of x, w and bias."""
    given = inputs()
    x, w, b = (given[k].double().requires_grad_() for k in ("x", "weight", "bias"))
    want = torch.addmm(b, x, w)
    want = torch.nn.functional.silu(want) if silu else want
    want.backward(given["dy"].double())
    leaves = [given[k].clone().requires_grad_() for k in ("x", "weight", "bias")]
    have = port.addmm(leaves[2], leaves[0], leaves[1], silu)
    have.backward(given["dy"])
    assert close(have.detach(), want.detach())
    for leaf, ref in zip(leaves, (x, w, b), strict=True):
        assert close(leaf.grad, ref.grad)
