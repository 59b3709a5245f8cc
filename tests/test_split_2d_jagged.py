"""split_2d_jagged (recsys-examples' triton_split_2D_jagged): the port's forms the op's cases do
not run (a dense a or b, row counts read from the offsets), its programs walking several tiles,
its checked mode, and that its kernels and launchers are concat_2d_jagged's (each ATK folder holds
its own copy). Where the checkout is (AUTOTUNE_RECSYS_EXAMPLES), each form is also compared with
upstream's, which runs in the interpreter."""

import ast

import pytest
import torch

from core.paths import port_file
from ops import get_op
from ops.concat_split import join
from ops.ports import load_port

SPEC = get_op("split_2d_jagged")
UPSTREAM_MISSING = SPEC.upstream.missing()
#: What each port has of its own: its autograd Function, upstream's entry points, its kernel names.
OWN = {
    "Concat2DJaggedFunction", "triton_concat_2D_jagged", "triton_concat_2D_jagged_jagged",
    "triton_concat_2D_dense_jagged", "Split2DJaggedFunction", "triton_split_2D_jagged", "_KERNELS",
    "FROZEN_CONFIGS",  # each op's own tuning, in its generated block
}  # fmt: skip


@pytest.fixture
def port(cpu):
    return load_port("split_2d_jagged")


def offsets(lengths):
    return torch.tensor([0, *torch.tensor(lengths).cumsum(0).tolist()])


def test_the_two_ports_share_their_kernels_and_launchers():
    """Everything but the Functions, the entry points, the kernel names and the frozen configs is
    the same source."""

    def shared(op):
        tree = ast.parse(port_file(op).read_text())
        named = {}
        for node in tree.body:
            targets = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
            name = getattr(node, "name", None) or (targets[0] if targets else None)
            if name and name not in OWN:
                named[name] = ast.dump(node)
        return named

    concat, split = shared("concat_2d_jagged"), shared("split_2d_jagged")
    assert concat.keys() == split.keys() and "_split_2d_jagged_kernel" in concat
    assert [k for k in concat if concat[k] != split[k]] == []
    kernels = {p: load_port(p)._KERNELS for p in ("concat_2d_jagged", "split_2d_jagged")}
    assert kernels == {
        "concat_2d_jagged": {"concat": "fwd", "split": "bwd"},
        "split_2d_jagged": {"split": "fwd", "concat": "bwd"},
    }


@pytest.mark.parametrize("dense", ["a", "b"])
def test_a_dense_side_comes_out_as_b_n_d(port, dense):
    """offsets of the dense side None, dense_size rows of each sequence there: a [B, n, D] tensor;
    the backward joins the gradients back."""
    jagged_lengths, batch, n = [3, 0, 2], 3, 2
    oj = offsets(jagged_lengths)
    flat = torch.arange(batch + 1) * n
    oa, ob = (None, oj) if dense == "a" else (oj, None)
    full_a, full_b = (flat, oj) if dense == "a" else (oj, flat)
    values = torch.randn(batch * n + sum(jagged_lengths), 4)
    a, b = port.split_2d_jagged_fwd(values, 5, oa, ob, n, check=True)
    want = (a.reshape(-1, 4), b.reshape(-1, 4))
    assert (a if dense == "a" else b).shape == (batch, n, 4)
    assert torch.equal(join(*want, full_a, full_b, 0), values)
    leaf = values.clone().requires_grad_()
    got = port.triton_split_2D_jagged(leaf, 5, oa, ob, n)
    grads = (torch.randn_like(got[0]), torch.randn_like(got[1]))
    torch.autograd.backward(got, grads)
    assert torch.equal(leaf.grad, join(*(g.reshape(-1, 4) for g in grads), full_a, full_b, 0))
    if UPSTREAM_MISSING is None:
        upstream = SPEC.upstream.load().triton_split_2D_jagged(values, 5, oa, ob, n)
        assert all(torch.equal(u, p) for u, p in zip(upstream, (a, b), strict=True))


def test_row_counts_are_read_from_the_offsets_where_not_given(port):
    """Upstream's seq_len_a and seq_len_b default to the ends of the offsets (a host read)."""
    oa, ob = offsets([2, 0, 3]), offsets([1, 4, 1])
    values = torch.randn(11, 3)
    a, b = port.split_2d_jagged_fwd(values, 6, oa, ob, 0, 1)
    assert a.shape == (5, 3) and b.shape == (6, 3)
    assert torch.equal(join(a, b, oa, ob, 1), values)
    with pytest.raises(ValueError, match="offsets end at 5 but the jagged tensor has 4 rows"):
        port.split_2d_jagged_fwd(values, 6, oa, ob, 0, 1, 4, 7, check=True)


def test_programs_walk_tiles_of_several_rows_and_column_blocks(cpu):
    case = SPEC.case("b1_n70_d48_p0_fp16")
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    config = {"BLOCK_N": 8, "BLOCK_D": 16, "NUM_PROGRAMS": 16, "num_warps": 4}
    for kernel, names in (("fwd", ("values_a", "values_b")), ("bwd", ("d_values",))):
        got = SPEC.launch(kernel, inputs, config)
        for name in names:
            assert torch.equal(got[name].double(), golden[name]), (kernel, name)
