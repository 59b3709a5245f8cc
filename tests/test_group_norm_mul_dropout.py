"""group_norm_mul_dropout (recsys-examples' GroupNormMulDropoutFunction): the port's autograd
Function against torch's group_norm, its input checks, and the weight gradients' partial rows
(one per program, or upstream's lock rows at a program per row block). Dropout at p > 0:
tests/test_norm_mul_dropout.py."""

import pytest
import torch

from autotuner.backends.npu import npu_limits
from core.limits import DeviceLimits
from ops import get_op
from ops.ports import load_port

SPEC = get_op("group_norm_mul_dropout")


@pytest.fixture
def port(cpu):
    return load_port("group_norm_mul_dropout")


def inputs(name="n37_h3_d40_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-4, atol=1e-5)


def test_the_autograd_function_is_upstreams_call(port):
    """GroupNormMulDropoutFunction.apply(x, u, weight, bias, eps, ratio, training, concat_ux,
    num_heads, linear_dim, seed), as upstream's: gradients of x, u, weight and bias against
    torch's group_norm in float64 (p = 0)."""
    given = inputs()
    heads, width = given["weight"].numel(), given["x"].size(1)
    leaves64 = [given[k].double().requires_grad_() for k in ("x", "u", "weight", "bias")]
    x, u, w, b = leaves64
    normed = torch.nn.functional.group_norm(x.view(x.size(0), heads, -1), heads, w, b, SPEC.eps)
    want = normed.view_as(x) * u
    want.backward(given["dy"].double())
    leaves = [given[k].clone().requires_grad_() for k in ("x", "u", "weight", "bias")]
    args = (SPEC.eps, 0.0, True, False, heads, width // heads, None)
    have = port.GroupNormMulDropoutFunction.apply(*leaves, *args)
    have.backward(given["dy"])
    assert close(have.detach(), want.detach())
    for leaf, ref in zip(leaves, leaves64, strict=True):
        assert close(leaf.grad, ref.grad)
    with pytest.raises(ValueError, match="concat_ux is not ported"):
        port.GroupNormMulDropoutFunction.apply(*leaves, SPEC.eps, 0.0, True, True, heads,
                                               width // heads, None)  # fmt: skip
    with pytest.raises(ValueError, match="num_heads"):
        port.GroupNormMulDropoutFunction.apply(*leaves, SPEC.eps, 0.0, True, False, heads + 1,
                                               width // heads, None)  # fmt: skip


def test_checked_inputs_say_what_is_wrong_in_one_line(port):
    x, u, w, b = (inputs()[k] for k in ("x", "u", "weight", "bias"))
    for args, message in (
        ((x, u[:, :5], w, b), "u must be"),
        ((x, u, w, b[:1]), "weight and bias must be"),
    ):
        with pytest.raises(ValueError, match=message) as raised:
            port.group_norm_mul_dropout_fwd(
                *args, SPEC.eps, 0.0, True, num_heads=w.numel(),
                linear_dim=x.size(1) // w.numel(), seed=1, check=True,
            )  # fmt: skip
        assert "\n" not in str(raised.value)


@pytest.mark.parametrize("programs", [3, 10])
def test_each_program_leaves_one_partial_row(port, monkeypatch, programs):
    """BLOCK_N rows a tile, summed per head: one partial row of H a program, and the rows sum to
    the gradients. Every program stores its row, a tile past the last row too (10 programs of 4
    rows over 37), so the launcher leaves them unfilled: here they start as NaN."""
    given = inputs()
    golden = SPEC.reference(given)
    state = SPEC.kernel_inputs("bwd_dx", given, golden)
    config = {"BLOCK_N": 4, "NUM_PROGRAMS": programs}
    args = (state[k] for k in ("dy", "x", "u", "weight", "bias", "mean", "rstd"))
    empty = torch.empty
    monkeypatch.setattr(torch, "empty", lambda *a, **k: empty(*a, **k).fill_(float("nan")))
    _, _, dw, db = port.group_norm_mul_dropout_bwd_dx(*args, 0.0, True, 1, config=config)
    assert dw.shape == db.shape == (programs, 3)
    assert close(dw.sum(0), golden["dweight"]) and close(db.sum(0), golden["dbias"])


def test_a_bwd_dx_trial_times_the_sum_it_feeds(port, cpu, monkeypatch):
    """bwd_dx's program count is the number of partial rows bwd_dw sums, so a trial of bwd_dx
    times both (on the H200 a config 1.03x faster alone left 10^6 rows and slowed the part 6%),
    and its studies are named apart from those that timed bwd_dx alone."""
    from autotuner.search.study import study_name
    from autotuner.search.trial import CaseRunner

    summed = []
    real = port.group_norm_mul_dropout_bwd_dw

    def counted(dw, db, *args, **kwargs):
        summed.append(tuple(dw.shape))
        return real(dw, db, *args, **kwargs)

    monkeypatch.setattr(port, "group_norm_mul_dropout_bwd_dw", counted)
    runner = CaseRunner(cpu, SPEC.name, "bwd_dx", SPEC.case("n37_h3_d40_fp32"))
    config = {"BLOCK_N": 4, "NUM_PROGRAMS": 5, "num_warps": 1}
    assert runner.measure(config).ok
    assert summed and set(summed) == {(5, 3)}
    assert len(runner.samples(config, 2)) >= 2 and len(summed) >= 4
    case = SPEC.case("n37_h3_d40_fp32")
    alone = study_name(SPEC.name, "bwd_dx", case, "cpu", "0" * 12)
    assert study_name(SPEC.name, "bwd_dx", case, "cpu", "0" * 12, feeds="bwd_dw") != alone
    assert SPEC.kernel("bwd_dx").feeds == "bwd_dw" and not SPEC.kernel("fwd").feeds


def test_a_program_per_row_block_adds_into_upstreams_lock_rows(port, monkeypatch):
    """NUM_PROGRAMS 0: a program per row block (37 rows of 4: 10), each adding its sums into
    lock row pid % locks, which start at zero (min(N, upstream's GROUP_N) of them, here 3). The
    rows still sum to the gradients, and dx, du are the golden's."""
    monkeypatch.setattr(port, "_lock_rows", lambda n, h, d: 3)
    given = inputs()
    golden = SPEC.reference(given)
    state = SPEC.kernel_inputs("bwd_dx", given, golden)
    config = {"BLOCK_N": 4, "NUM_PROGRAMS": 0}
    args = (state[k] for k in ("dy", "x", "u", "weight", "bias", "mean", "rstd"))
    dx, du, dw, db = port.group_norm_mul_dropout_bwd_dx(*args, 0.0, True, 1, config=config)
    assert dw.shape == db.shape == (3, 3)
    assert close(dw.sum(0), golden["dweight"]) and close(db.sum(0), golden["dbias"])
    assert close(dx, golden["dx"]) and close(du, golden["du"])


def test_a_program_per_row_block_is_not_an_ascend_launch():
    """10^6 rows a program a row block: over the 65535 blocks an Ascend launch takes, not on a
    GPU."""
    case = next(c for c in SPEC.cases("performance") if c.shape["N"] == 1048576)
    config = {"BLOCK_N": 1, "NUM_PROGRAMS": 0, "num_warps": 1}
    kernel = SPEC.kernel("bwd_dx")
    assert "65535" in kernel.launch_violation(config, case, npu_limits("950PR"))
    assert kernel.launch_violation(config, case, DeviceLimits(cores=132)) is None
