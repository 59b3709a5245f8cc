"""concat_2d_jagged (recsys-examples' triton_concat_2D_jagged): the port's forms the op's cases do
not run (a dense a or b, a replacing b's rows), its programs walking several tiles, its autograd
Function through upstream's three entry points, and its checked mode. Where the checkout is
(AUTOTUNE_RECSYS_EXAMPLES), each form is also compared with upstream's, which runs in the
interpreter."""

import pytest
import torch

from ops import get_op
from ops.concat_split import join
from ops.ports import load_port

SPEC = get_op("concat_2d_jagged")
UPSTREAM_MISSING = SPEC.upstream.missing()
needs_upstream = pytest.mark.skipif(UPSTREAM_MISSING is not None, reason=UPSTREAM_MISSING or "")


@pytest.fixture
def port(cpu):
    return load_port("concat_2d_jagged")


def offsets(lengths):
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()])


def dense_offsets(batch, n):
    return torch.arange(batch + 1) * n


def jagged(lengths, d=5, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return torch.randn(sum(lengths), d, generator=gen), offsets(lengths)


LENGTHS_A, LENGTHS_B = [3, 0, 2, 4], [1, 2, 0, 3]


@pytest.mark.parametrize("dense", ["a", "b"])
def test_a_dense_side_has_n_rows_per_sequence(port, dense):
    """a or b dense [B, n, D] (its offsets None, upstream's triton_concat_2D_dense_jagged for a),
    forward and backward, against the jagged join of the same rows."""
    a, oa = jagged(LENGTHS_A)
    b, ob = jagged(LENGTHS_B, seed=1)
    dense_values = torch.randn(4, 2, 5)
    flat, flat_offsets = dense_values.reshape(8, 5), dense_offsets(4, 2)
    if dense == "a":
        args, want = (dense_values, b, None, ob), join(flat, b, flat_offsets, ob, 0)
    else:
        args, want = (a, dense_values, oa, None), join(a, flat, oa, flat_offsets, 0)
    out = port.concat_2d_jagged_fwd(6, *args, check=True)
    assert torch.equal(out, want)
    d_out = torch.randn_like(out)
    leaves = [t.clone().requires_grad_() for t in args[:2]]
    got = port.triton_concat_2D_jagged(6, *leaves, *args[2:])
    got.backward(d_out)
    assert torch.equal(got.detach(), want)
    ref = [t.clone().requires_grad_() for t in (flat, b) if dense == "a"] or [
        t.clone().requires_grad_() for t in (a, flat)
    ]
    join(*ref, *((flat_offsets, ob) if dense == "a" else (oa, flat_offsets)), 0).backward(d_out)
    for leaf, want_leaf in zip(leaves, ref, strict=True):
        assert torch.equal(leaf.grad.reshape(want_leaf.grad.shape), want_leaf.grad)
    if dense == "a" and UPSTREAM_MISSING is None:
        upstream = SPEC.upstream.load()
        assert torch.equal(upstream.triton_concat_2D_dense_jagged(4, ob, b, dense_values), out)
        assert torch.equal(port.triton_concat_2D_dense_jagged(4, ob, b, dense_values), out)


def replaced(a, oa, b, ob):
    """a's rows with the last len_b of each sequence replaced by b's."""
    out = a.clone()
    for z in range(oa.numel() - 1):
        len_b = int(ob[z + 1] - ob[z])
        out[int(oa[z + 1]) - len_b : int(oa[z + 1])] = b[int(ob[z]) : int(ob[z + 1])]
    return out


def test_the_replace_form_and_its_backward(port):
    """is_replace: a's layout, its last len_b rows b's; the backward gives a zeros there."""
    a, oa = jagged(LENGTHS_A)
    b, ob = jagged([1, 0, 2, 3], seed=1)
    out = port.concat_2d_jagged_fwd(4, a, b, oa, ob, is_replace=True, check=True)
    assert torch.equal(out, replaced(a, oa, b, ob))
    leaves = [t.clone().requires_grad_() for t in (a, b)]
    d_out = torch.randn_like(out)
    port.triton_concat_2D_jagged(4, *leaves, oa, ob, True).backward(d_out)
    ref = [t.clone().requires_grad_() for t in (a, b)]
    replaced(ref[0], oa, ref[1], ob).backward(d_out)
    assert torch.equal(leaves[0].grad, ref[0].grad) and torch.equal(leaves[1].grad, ref[1].grad)
    if UPSTREAM_MISSING is None:
        upstream = SPEC.upstream.load().triton_concat_2D_jagged(4, a, b, oa, ob, True)
        assert torch.equal(upstream, out)


def test_programs_walk_tiles_of_several_rows_and_column_blocks(cpu):
    """Fewer programs than tiles, tiles of 4 rows across b's prefix, a and b's rest, columns in
    blocks narrower than D: every row once, as with upstream's one program per row."""
    case = SPEC.case("b6_n20_d7_p2_fp32")
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    config = {"BLOCK_N": 4, "BLOCK_D": 2, "NUM_PROGRAMS": 16, "num_warps": 4}
    for kernel, names in (("fwd", ("out",)), ("bwd", ("d_values_a", "d_values_b"))):
        got = SPEC.launch(kernel, inputs, config)
        for name in names:
            assert torch.equal(got[name].double(), golden[name]), (kernel, name)


def test_the_entry_points_are_upstreams(port):
    """triton_concat_2D_jagged_jagged(max_left, offsets_left, values_left, max_right, ...) with a
    prefix: the sum of the maxima bounds the joined sequences; gradients are the split."""
    a, oa = jagged(LENGTHS_A)
    b, ob = jagged([2, 2, 3, 3], seed=1)
    leaves = [t.clone().requires_grad_() for t in (a, b)]
    out = port.triton_concat_2D_jagged_jagged(4, oa, leaves[0], 3, ob, leaves[1], False, 2)
    assert torch.equal(out.detach(), join(a, b, oa, ob, 2))
    d_out = torch.randn_like(out)
    out.backward(d_out)
    ref = [t.clone().requires_grad_() for t in (a, b)]
    join(*ref, oa, ob, 2).backward(d_out)
    assert torch.equal(leaves[0].grad, ref[0].grad) and torch.equal(leaves[1].grad, ref[1].grad)
    if UPSTREAM_MISSING is None:
        upstream = SPEC.upstream.load()
        assert torch.equal(
            upstream.triton_concat_2D_jagged_jagged(4, oa, a, 3, ob, b, False, 2), out
        )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"max_seq_len": 5}, "over max_seq_len=5"),
        ({"n_prefix_from_right": 2}, "fewer than n_prefix=2"),
        ({"offsets_b": offsets([1, 2, 3])}, "offsets_a has 4 sequences, offsets_b 3"),
        ({"is_replace": True, "n_prefix_from_right": 1}, "0 with is_replace"),
        ({"offsets_a": None, "offsets_b": None}, "cannot both be dense"),
    ],
)
def test_the_checked_mode_refuses_what_the_kernels_cannot_take(port, change, message):
    a, oa = jagged(LENGTHS_A)
    b, ob = jagged(LENGTHS_B, seed=1)
    args = {"max_seq_len": 7, "values_a": a, "values_b": b, "offsets_a": oa, "offsets_b": ob,
            "is_replace": False, "n_prefix_from_right": 0} | change  # fmt: skip
    with pytest.raises(ValueError, match=message) as refused:
        port.concat_2d_jagged_fwd(**args, check=True)
    assert "\n" not in str(refused.value)
