"""layer_norm_mul_dropout (recsys-examples' LayerNormMulDropoutFunction): the port's forms the
op's cases do not run (a u of strided rows, as HSTU's slice of its uvqk projection; the input
checks), and its autograd Function. Dropout at p > 0: tests/test_norm_mul_dropout.py."""

import pytest
import torch

from ops import get_op
from ops.ports import load_port

SPEC = get_op("layer_norm_mul_dropout")


@pytest.fixture
def port(cpu):
    return load_port("layer_norm_mul_dropout")


def inputs(name="n37_d100_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-4, atol=1e-5)


def test_a_u_of_strided_rows_is_read_in_place(port):
    """u as the first D columns of a wider projection (HSTU's torch.split of uvqk): the same
    outputs as a contiguous u, at p > 0 too."""
    given = inputs()
    x, u, w, b, dy = (given[k] for k in SPEC.input_names)
    wide = torch.cat([u, torch.randn(u.size(0), 3 * u.size(1))], dim=1)
    strided = wide[:, : u.size(1)]
    assert strided.stride(0) != u.size(1)
    walks = {"BLOCK_N": 16, "NUM_PROGRAMS": 4}
    for ratio in (0.0, 0.3):
        dropout = (ratio, True, 5)
        fwd = port.layer_norm_mul_dropout_fwd
        want = fwd(x, u, w, b, SPEC.eps, ratio, True, seed=5, config=walks)
        have = fwd(x, strided, w, b, SPEC.eps, ratio, True, seed=5, config=walks)
        assert all(torch.equal(h, t) for h, t in zip(have, want, strict=True))
        stats, call = want[1:], port.layer_norm_mul_dropout_bwd_dx
        want = call(dy, x, u, w, b, *stats, *dropout, config=walks)
        have = call(dy, x, strided, w, b, *stats, *dropout, config=walks)
        assert all(torch.equal(h, t) for h, t in zip(have, want, strict=True))


def test_checked_inputs_say_what_is_wrong_in_one_line(port):
    x, u, w, b = (inputs()[k] for k in ("x", "u", "weight", "bias"))
    for args, message in (
        ((x, u[:, :5], w, b), "u must be"),
        ((x, u, w[:5], b), "weight and bias must be"),
    ):
        with pytest.raises(ValueError, match=message):
            port.layer_norm_mul_dropout_fwd(*args, SPEC.eps, 0.0, True, seed=1, check=True)


def test_no_rows_give_empty_outputs(port):
    given = SPEC.make_inputs(SPEC.case("n0_d32_fp32"), torch.device("cpu"))
    out = SPEC.run_port(given)
    assert out["y"].shape == (0, 32) and out["du"].shape == (0, 32)
    assert not out["dweight"].any() and not out["dbias"].any()


def test_the_autograd_function_is_upstreams_call(port):
    """LayerNormMulDropoutFunction.apply(x, u, weight, bias, eps, ratio, training, concat_ux,
    seed), as upstream's: gradients of x, u, weight and bias against float64 torch (p = 0)."""
    given = inputs()
    leaves64 = [given[k].double().requires_grad_() for k in ("x", "u", "weight", "bias")]
    x, u, w, b = leaves64
    want = torch.nn.functional.layer_norm(x, (x.size(1),), w, b, SPEC.eps) * u
    want.backward(given["dy"].double())
    leaves = [given[k].clone().requires_grad_() for k in ("x", "u", "weight", "bias")]
    have = port.LayerNormMulDropoutFunction.apply(*leaves, SPEC.eps, 0.0, True, False, None)
    have.backward(given["dy"])
    assert close(have.detach(), want.detach())
    for leaf, ref in zip(leaves, leaves64, strict=True):
        assert close(leaf.grad, ref.grad)
    with pytest.raises(ValueError, match="concat_ux is not ported"):
        port.LayerNormMulDropoutFunction.apply(*leaves, SPEC.eps, 0.0, True, True, None)


def test_a_call_without_a_seed_draws_one_and_keeps_it_for_the_backward(port):
    """seed=None: a fresh seed per call (upstream's draw), the backward's mask the forward's."""
    given = inputs()
    leaves = [given[k].clone().requires_grad_() for k in ("x", "u", "weight", "bias")]
    y = port.layer_norm_mul_dropout(*leaves, SPEC.eps, 0.5, True)
    y.backward(torch.ones_like(y))
    dropped = y.detach() == 0
    assert dropped.any() and not leaves[1].grad[dropped].any()
    assert leaves[1].grad[~dropped].ne(0).all()
