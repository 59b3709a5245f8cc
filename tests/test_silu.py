"""silu (recsys-examples' triton_silu): the port's forms the op's cases do not run (other shapes,
strided inputs, programs walking several blocks), its checks and its autograd Function, each
with upstream's arguments."""

import pytest
import torch

from ops import get_op
from ops.ports import load_port

SPEC = get_op("silu")


@pytest.fixture
def port(cpu):
    return load_port("silu")


def golden(x, dy):
    return SPEC.reference({"x": x, "dy": dy})


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-5, atol=1e-6)


def test_any_shape_and_a_strided_input_are_computed_whole(port):
    """Upstream's view(-1) takes contiguous tensors; the port any: a 3-D input sliced from a wider
    tensor gives silu of the slice, in its shape."""
    wide = torch.randn(4, 3, 50)
    x, dy = wide[:, :, 10:30], torch.randn(4, 3, 20)
    y, dx = port.silu_fwd(x), port.silu_bwd(dy, x)
    want = golden(x, dy)
    assert y.shape == dx.shape == x.shape
    assert close(y, want["y"]) and close(dx, want["dx"])


def test_programs_walk_every_block_once(port, monkeypatch):
    """Fewer programs than blocks (here 3 for 37 * 100 / 256 = 15 blocks): each element once."""
    monkeypatch.setitem(port.MAX_PROGRAMS, "cpu", 3)
    inputs = SPEC.make_inputs(SPEC.case("n37_d100_fp32"), torch.device("cpu"))
    out = SPEC.run_port(inputs)
    want = SPEC.reference(inputs)
    assert close(out["y"], want["y"]) and close(out["dx"], want["dx"])


def test_checked_calls_refuse_other_dtypes_and_mismatched_gradients(port):
    x = torch.randn(3, 4)
    with pytest.raises(ValueError, match="float32, float16 or bfloat16"):
        port.silu_fwd(x.double(), check=True)
    with pytest.raises(ValueError, match="grad_output must match input"):
        port.silu_bwd(torch.randn(4, 3), x, check=True)


def test_the_autograd_function_is_upstreams_call(port):
    """silu(input), as upstream's triton_silu: y and the input's gradient, as torch's."""
    x = torch.randn(37, 100, dtype=torch.float64)
    dy = torch.randn_like(x)
    want_x = x.clone().requires_grad_()
    torch.nn.functional.silu(want_x).backward(dy)
    have_x = x.float().requires_grad_()
    y = port.silu(have_x)
    y.backward(dy.float())
    assert close(y.detach(), torch.nn.functional.silu(x))
    assert close(have_x.grad, want_x.grad)
