"""No timed call of any op waits for the device: host work stays in the preparation."""

import pytest
import torch

from autotuner.measure.host_sync import host_reads, host_scalars
from ops import all_ops

OPS = sorted(all_ops())


def smallest_case(spec):
    return min(spec.cases("accuracy"), key=lambda c: sum(c.lengths) + sum(c.shape.values()))


@pytest.mark.parametrize("op", OPS)
def test_timed_calls_read_no_device_value_on_the_host(op):
    """Every part of the port and of upstream (as baselines and checks time them) and every
    kernel launch (as the search times it), at its default config."""
    spec = all_ops()[op]
    case = smallest_case(spec)
    inputs = spec.make_inputs(case, torch.device("cpu"))
    golden = spec.reference(inputs, torch.float64)
    calls = {}
    for part in spec.parts:
        calls[f"port {part}"] = (spec.port_part(part, inputs, None), inputs)
        calls[f"upstream {part}"] = (spec.upstream_part(part, inputs, case), inputs)
    for kernel in spec.kernels:
        kernel_inputs = spec.kernel_inputs(kernel.name, inputs, golden)
        config = kernel.default(case)
        launch = lambda k=kernel.name, i=kernel_inputs, c=config: spec.launch(k, i, c)  # noqa: E731
        calls[f"kernel {kernel.name}"] = (launch, kernel_inputs)
    reads = {
        what: found
        for what, (call, given) in calls.items()
        if call is not None and (found := host_reads(call, host_scalars(given)))
    }
    assert reads == {}


def test_a_read_of_a_device_value_is_caught_and_host_scalars_are_not():
    x, n = torch.randn(8), torch.tensor(8)

    def launch():
        rows = int(n)  # a host scalar: waits for nothing
        return torch.empty(rows) if int(x.abs().sum()) >= 0 else None

    (found,) = host_reads(launch, [n])
    assert found.startswith("__int__ at test_host_sync.py:")
    assert host_reads(lambda: torch.empty(int(n)), [n]) == []
