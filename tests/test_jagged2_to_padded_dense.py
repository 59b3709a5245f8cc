"""jagged2_to_padded_dense: the backward reuses the lengths the forward computed, as upstream's
autograd Function does, so the timed backward part is its kernel alone."""

import pytest
import torch
from torch.overrides import TorchFunctionMode

from ops import get_op
from ops.jagged2_to_padded_dense import PADDING_VALUE
from ops.ports import load_port

SPEC = get_op("jagged2_to_padded_dense")


class _Calls(TorchFunctionMode):
    """The torch functions called inside the mode, by name."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.names.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))


@pytest.fixture
def port(cpu):
    return load_port("jagged2_to_padded_dense")


def inputs(name="b5_n20_fp32"):
    return SPEC.make_inputs(SPEC.case(name), torch.device("cpu"))


def test_the_timed_backward_part_computes_no_lengths(port):
    """The part's call launches the kernel without the sqrt of the segment sizes before it:
    the lengths were computed when the part was built (the forward's, saved), untimed."""
    part = SPEC.port_part("bwd", inputs(), None)
    with _Calls() as calls:
        dvalues = part()
    assert "sqrt" not in calls.names
    assert torch.equal(dvalues, SPEC.launch("bwd", inputs(), None)["dvalues"])


def test_the_backward_launcher_refuses_lengths_of_other_offsets(port):
    given = inputs()
    lengths = port.jagged2_lengths(given["offsets"])
    out = port.padded_dense_to_jagged2_fwd(
        given["ddense"], given["offsets"], 20, lengths=lengths, check=True
    )
    assert torch.equal(out, port.padded_dense_to_jagged2_fwd(given["ddense"], given["offsets"], 20))
    with pytest.raises(ValueError, match="lengths must be jagged2_lengths"):
        port.padded_dense_to_jagged2_fwd(
            given["ddense"], given["offsets"], 20, lengths=lengths + 1, check=True
        )


def test_autograd_backward_matches_the_golden(port):
    """The autograd Function saves the lengths in its forward and its backward reuses them."""
    given = inputs()
    values = given["values"].double().requires_grad_()
    dense = port.jagged2_to_padded_dense(values, given["offsets"], 20, PADDING_VALUE)
    dense.backward(given["ddense"].double())
    golden = SPEC.reference(given)
    assert torch.allclose(dense, golden["dense"]) and torch.allclose(values.grad, golden["dvalues"])
