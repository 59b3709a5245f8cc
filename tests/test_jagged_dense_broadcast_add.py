"""jagged_dense_broadcast_add (recsys-examples' triton_jagged): what the op's cases do not run
(programs walking several blocks, a max_seq_len far below the lengths, the autograd Function, the
input checks) and, with the checkout, upstream's own Function at its first config in the
interpreter against the port."""

import pytest
import torch

from core import upstream
from ops import get_op
from ops.ports import load_port

SPEC = get_op("jagged_dense_broadcast_add")
CONFIG = {"BLOCK_N": 4, "BLOCK_D": 32}


@pytest.fixture
def port(cpu):
    return load_port(SPEC.name)


def inputs(name="b3_n40_d100_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("programs", [1, 0])
def test_programs_walk_every_block_once(port, monkeypatch, programs):
    """A program count (one per core) or fewer programs than blocks (3): every output is
    computed once, as with one program per block."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 3)
    given, golden = inputs(), SPEC.reference(inputs())
    for kernel in SPEC.kernels:
        config = {**CONFIG, "PROGRAMS": programs}
        for name, value in SPEC.launch(kernel.name, given, config).items():
            assert close(value, golden[name]), (kernel.name, name)


@pytest.mark.parametrize("programs", [1, 0])
def test_the_forward_over_row_blocks_finds_each_rows_sequence(port, monkeypatch, programs):
    """GRID "rows": on every accuracy case (empty sequences, a single row, B = 1, a sequence
    past max_seq_len, D over BLOCK_D), row blocks of 4 (blocks straddle sequences), one program
    per block or walking them: the same output, bit for bit, as upstream's grid (which the
    op's verify holds to the golden); an unstored row would stay NaN."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 3)
    monkeypatch.setattr(torch, "empty_like", lambda t: torch.full_like(t, float("nan")))
    for case in SPEC.cases("accuracy"):
        given = SPEC.make_inputs(case, torch.device("cpu"))
        config = {**CONFIG, "GRID": "rows", "PROGRAMS": programs}
        out = SPEC.launch("fwd", given, config)["out"]
        assert torch.equal(out, SPEC.launch("fwd", given, CONFIG)["out"]), case.name


def test_rows_past_max_seq_len_are_computed(port):
    """max_seq_len sizes the forward's grid only: with max_seq_len 1 every row is still done."""
    given = {**inputs(), "max_seq_len": torch.tensor(1)}
    golden = SPEC.reference(given)
    out = SPEC.run_port(given, {"fwd": CONFIG, "bwd": CONFIG})
    assert close(out["out"], golden["out"]) and close(out["dy"], golden["dy"])


def test_the_autograd_function_is_upstreams_call(port):
    """jagged_dense_broadcast_add(max_seq_len, seq_offsets, jagged, dense), as upstream's
    triton_jagged_dense_broadcast_add: dx is dout, dy the rows of dout summed per sequence."""
    given = inputs()
    golden = SPEC.reference(given)
    x, y = (given[k].clone().requires_grad_() for k in ("x", "y"))
    out = port.jagged_dense_broadcast_add(40, given["offsets"], x, y)
    out.backward(given["dout"])
    assert close(out.detach(), golden["out"]) and torch.equal(x.grad, given["dout"])
    assert close(y.grad, golden["dy"])


def test_checked_inputs_say_what_is_wrong(port):
    x, y, offsets = (inputs()[k] for k in ("x", "y", "offsets"))
    with pytest.raises(ValueError, match="must be \\[sum_L, 100\\]"):
        port.jagged_dense_broadcast_add_fwd(x[:, :5], y, offsets, 40, check=True)
    with pytest.raises(ValueError, match="offsets end at"):
        port.jagged_dense_broadcast_add_fwd(x[1:], y, offsets, 40, check=True)


@pytest.mark.skipif(
    upstream.RECSYS_EXAMPLES.missing() is not None,
    reason=upstream.RECSYS_EXAMPLES.missing() or "",
)
def test_upstreams_function_at_its_first_config_equals_the_port(port, monkeypatch):
    """Upstream's autograd Function in the interpreter, its forward's autotuner held to its first
    config (one config: Triton's Autotuner then times nothing), against the port's defaults.
    Upstream joins its masks with Python's `and`, which the compiler reads as a logical and but
    the interpreter as Python's (its tensors are all true: the first mask is dropped), so here
    every length is a multiple of upstream's BLOCK_N (16) and D of its BLOCK_D (64), where its
    masks are whole rows and columns."""
    module = SPEC.upstream.load()
    tuner = module.jagged_dense_broadcast_add_kernel
    monkeypatch.setattr(tuner, "configs", tuner.configs[:1])
    case = SPEC.make_case({"B": 3, "max_seq_len": 48, "D": 128}, "float32", (32, 0, 48))
    given = SPEC.make_inputs(case, torch.device("cpu"))
    want = SPEC.run_port(given)
    function, ctx = getattr(module, SPEC.upstream_function), type("Ctx", (), {})()
    ctx.save_for_backward = lambda *tensors: setattr(ctx, "saved_tensors", tensors)
    out = function.forward(ctx, *SPEC.upstream_args(given))
    _, _, dx, dy = function.backward(ctx, given["dout"])
    assert torch.equal(out, want["out"]) and dx is given["dout"]
    assert close(dy, want["dy"])
