"""add_position_embeddings (recsys-examples' triton_add_position_embeddings): the port's forms the
op's cases do not run (scale 1, the inference form's ind_offsets, a sequence over max_seq_len,
programs walking several blocks), its checks and its autograd Function."""

import pytest
import torch

from ops import get_op
from ops.add_position_embeddings import clamped_positions
from ops.ports import load_port

SPEC = get_op("add_position_embeddings")


@pytest.fixture
def port(cpu):
    return load_port("add_position_embeddings")


def inputs(name="b4_n16_d20_k12_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-5, atol=1e-5)


def args(given):
    return given["x"], given["offsets"], given["high_inds"], 16, given["dense"]


def test_scale_one_adds_and_passes_dout_through(port):
    given = inputs()
    out = port.add_position_embeddings_fwd(*args(given), 1.0)
    positions = clamped_positions(given["offsets"], given["high_inds"])
    assert close(out, given["x"].double() + given["dense"].double()[positions])
    dx, ddense = port.add_position_embeddings_bwd(given["dout"], given["offsets"],
                                                  given["high_inds"], 16, 12, 1.0)  # fmt: skip
    assert dx is given["dout"]
    want = torch.zeros(12, 20, dtype=torch.float64).index_add_(0, positions, given["dout"].double())
    assert close(ddense, want)


def test_ind_offsets_shift_the_positions_before_the_clamp(port):
    """Upstream's inference form: row n of b at position min(n + ind_offsets[b], high_inds[b])."""
    given = inputs()
    shift = torch.tensor([3, 0, 2, 5])
    out = port.add_position_embeddings_fwd(*args(given), 2.0, shift, check=True)
    offsets, high = given["offsets"], given["high_inds"]
    lengths = offsets[1:] - offsets[:-1]
    seq = torch.repeat_interleave(torch.arange(4), lengths)
    n = torch.arange(seq.numel()) - offsets[seq]
    positions = torch.minimum(n + shift[seq], high[seq])
    assert close(out, 2 * given["x"].double() + given["dense"].double()[positions])


def test_the_functions_backward_refuses_ind_offsets_as_upstreams(port):
    given = inputs()
    x = given["x"].clone().requires_grad_()
    out = port.triton_add_position_embeddings(x, *args(given)[1:], 2.0, torch.zeros(4).long())
    with pytest.raises(ValueError, match="ind_offsets") as raised:
        out.backward(given["dout"])
    assert "\n" not in str(raised.value)


def test_the_autograd_function_is_upstreams_call(port):
    given = inputs()
    leaves = [given[k].clone().requires_grad_() for k in ("x", "dense")]
    offsets, high = given["offsets"], given["high_inds"]
    scale = float(given["scale"])
    out = port.triton_add_position_embeddings(leaves[0], offsets, high, 16, leaves[1], scale)
    out.backward(given["dout"])
    want = SPEC.reference(given)
    assert close(out.detach(), want["out"])
    assert close(leaves[0].grad, want["dx"]) and close(leaves[1].grad, want["ddense"])


def test_programs_walk_every_block_once_and_long_sequences_are_whole(port, monkeypatch):
    """Fewer programs than blocks, and max_seq_len below the longest sequence (16 rows of b2
    over max_seq_len 4): every row computed once, as the golden."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 3)
    given = inputs()
    fwd, bwd = ({"BLOCK_N": 2, "BLOCK_D": 8}, {"BLOCK_N": 2, "BLOCK_D": 16})
    out = port.add_position_embeddings_fwd(*args(given)[:3], 4, given["dense"], 2.0, config=fwd)
    dx, ddense = port.add_position_embeddings_bwd(given["dout"], given["offsets"],
                                                  given["high_inds"], 4, 12, 2.0, config=bwd)  # fmt: skip
    want = SPEC.reference({**given, "scale": torch.tensor(2.0)})
    assert close(out, want["out"]) and close(dx, want["dx"]) and close(ddense, want["ddense"])


@pytest.mark.parametrize(
    ("high", "message"), [([0, 5, 12, 11], "within 0..K - 1"), ([1, 6, 3, 2], "at most")]
)
def test_checked_calls_refuse_high_inds_out_of_range(port, high, message):
    given = inputs()
    x, offsets, _, n, dense = args(given)
    with pytest.raises(ValueError, match=message):
        port.add_position_embeddings_fwd(x, offsets, torch.tensor(high), n, dense, check=True)
