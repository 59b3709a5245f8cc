"""add_timestamp_position_embeddings (recsys-examples' triton_add_timestamp_positional_embeddings):
the port's forms the op's cases do not run (no targets, interleaved targets, log buckets),
programs walking several blocks, its refusal and its autograd Function."""

import pytest
import torch

from ops import get_op
from ops.add_timestamp_position_embeddings import indices
from ops.ports import load_port

SPEC = get_op("add_timestamp_position_embeddings")


@pytest.fixture
def port(cpu):
    return load_port("add_timestamp_position_embeddings")


def inputs(name="b4_n16_d20_k12_c4_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-5, atol=1e-5)


def call(port, given, targets, interleave, fn, **options):
    return port.add_timestamp_position_embeddings_fwd(
        given["x"], given["offsets"], given["pos"], given["ts"], given["timestamps"], 16,
        int(given["max_contextual_seq_len"]), given["lengths"], targets, interleave, fn, **options,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("targets", "interleave", "fn"),
    [(None, False, "sqrt"), ("half", True, "sqrt"), ("given", False, "log")],
)
def test_each_form_adds_the_embeddings_of_its_indices(port, targets, interleave, fn):
    """num_targets None, interleaved targets (high = length - 2 targets), log buckets: out and
    the stored indices as the golden's (the indices computed as upstream's kernel does)."""
    given = inputs()
    nt = {"given": given["num_targets"], "half": given["lengths"] // 2, None: None}[targets]
    out, pos_inds, ts_inds = call(port, given, nt, interleave, fn, check=True)
    position, bucket = indices({**given, "num_targets": nt}, interleave, fn)
    assert torch.equal(pos_inds.long(), position) and torch.equal(ts_inds.long(), bucket)
    want = given["x"].double() + given["pos"].double()[position] + given["ts"].double()[bucket]
    assert close(out, want)


def test_other_time_bucket_functions_are_refused_in_every_mode(port):
    given = inputs()
    for check in (False, True):
        with pytest.raises(ValueError, match="time_bucket_fn") as raised:
            call(port, given, given["num_targets"], False, "linear", check=check)
        assert "\n" not in str(raised.value)


def test_the_autograd_function_is_upstreams_call(port):
    """dx is dout itself, dpos and dts the golden's sums."""
    given = inputs()
    leaves = [given[k].clone().requires_grad_() for k in ("x", "pos", "ts")]
    out = port.triton_add_timestamp_positional_embeddings(
        leaves[0], given["offsets"], leaves[1], leaves[2], given["timestamps"], 16,
        int(given["max_contextual_seq_len"]), given["lengths"], given["num_targets"], False, "sqrt",
    )  # fmt: skip
    out.backward(given["dout"])
    want = SPEC.reference(given)
    assert close(out.detach(), want["out"]) and torch.equal(leaves[0].grad, given["dout"])
    assert close(leaves[1].grad, want["dpos"]) and close(leaves[2].grad, want["dts"])


def test_programs_walk_every_block_once(port, monkeypatch):
    """Fewer programs than blocks in both kernels, runs of equal indices across blocks: the
    golden's outputs."""
    monkeypatch.setattr(port, "MAX_PROGRAMS", 3)
    given = inputs("b3_n40_d100_k64_c4_fp32")
    configs = {"fwd": {"BLOCK_N": 4, "BLOCK_D": 32}, "bwd": {"BLOCK": 8, "BLOCK_D": 32}}
    out = SPEC.run_port(given, configs)
    want = SPEC.reference(given)
    assert all(close(out[k], want[k]) for k in SPEC.output_names)
