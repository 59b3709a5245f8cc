"""jagged_jagged_bmm_jagged_out (FBGEMM SLL): the port's autograd Function (upstream's call)
gives the forward and the gradients of upstream's layouts, a sequence past max_seq_len included,
and its forward agrees with upstream's wrapper (the interpreter, fp32)."""

import torch

from ops import get_op
from ops.ports import load_port

SPEC = get_op("jagged_jagged_bmm_jagged_out")


def test_upstreams_call_through_autograd_gives_the_golden(cpu):
    case = SPEC.case("b4_n16_d40_fp32", "accuracy")  # lengths 0, 5, 16, 23: one truncated
    inputs = SPEC.make_inputs(case, cpu.device)
    golden = SPEC.reference(inputs)
    port = load_port(SPEC.name)
    offsets, z_offsets = inputs["offsets"], inputs["z_offsets"]
    lengths = offsets[1:] - offsets[:-1]
    x, y = (inputs[k].clone().requires_grad_() for k in ("x", "y"))
    z = port.jagged_jagged_bmm_jagged_out(
        x, y, lengths, offsets, lengths, offsets, lengths * lengths, z_offsets, 16, False
    )
    z.backward(inputs["dz"])
    for name, value in (("z", z.detach()), ("dx", x.grad), ("dy", y.grad)):
        assert torch.allclose(value.double(), golden[name], rtol=1e-5, atol=1e-5), name
    upstream = SPEC.upstream.load().triton_jagged_jagged_bmm_jagged_out(
        inputs["x"], inputs["y"].T, 16, lengths, lengths, lengths * lengths, offsets, offsets,
        z_offsets, False,
    )  # fmt: skip
    assert torch.allclose(upstream, z.detach(), rtol=1e-5, atol=1e-5)
