"""The CUDA backend's second timer: parts under 50 us replayed from a CUDA graph."""

import json

import pytest

from autotuner.backends import cuda
from autotuner.backends.base import Timing

from .conftest import compiled_run, requires_gpu


def bare_backend():
    """The backend's methods without a GPU behind them (the graph is never built here)."""
    return cuda.CudaBackend.__new__(cuda.CudaBackend)


def timing(ms):
    return Timing(ms, ms, ms, 10)


def test_a_part_above_the_threshold_has_no_second_timer(monkeypatch):
    backend = bare_backend()
    monkeypatch.setattr(backend, "_graph_ms", lambda fn: pytest.fail("graph built"), raising=False)
    assert backend.cross_check(lambda: None, timing(cuda.CROSS_CHECK_BELOW_MS)) == {}


def test_a_short_part_records_the_graph_time_and_the_ratio(monkeypatch):
    backend = bare_backend()
    monkeypatch.setattr(backend, "_graph_ms", lambda fn: 0.008, raising=False)
    assert backend.cross_check(lambda: None, timing(0.01)) == {
        "graph_ms": 0.008, "events_over_graph": pytest.approx(1.25),
    }  # fmt: skip


def test_work_a_graph_cannot_capture_is_said_not_raised(monkeypatch):
    def capture_fails(fn):
        raise RuntimeError("operation not permitted when stream is capturing\nmore")

    backend = bare_backend()
    monkeypatch.setattr(backend, "_graph_ms", capture_fails, raising=False)
    assert backend.cross_check(lambda: None, timing(0.01)) == {
        "graph_check": "not capturable: operation not permitted when stream is capturing"
    }


#: Run compiled (`compiled_run`): under TRITON_INTERPRET a CUDA graph captures nothing.
GRAPH_CHECK = """
import json
from autotuner.backends import cuda
from ops import get_op
backend = cuda.CudaBackend(0)
spec = get_op("jagged_to_padded_dense")
case = spec.case("b2048_n256_d64_fp16", "performance")
launch = spec.port_part("fwd", spec.make_inputs(case, backend.device), None)
events = backend.time(launch)
print(json.dumps({"events_ms": events.median_ms, **backend.cross_check(launch, events)}))
"""


@requires_gpu
@pytest.mark.gpu
def test_a_copy_kernel_replayed_from_a_graph_agrees_with_the_event_timer():
    """On a GPU: a part under 50 us of a copy op, kernel only, through the trial's own
    cross_check: both timers within a factor of two (the events time each call with a cold L2,
    the graph a warm one)."""
    result = json.loads(compiled_run(GRAPH_CHECK).strip().splitlines()[-1])
    assert result["events_ms"] < cuda.CROSS_CHECK_BELOW_MS, result
    assert result["graph_ms"] > 0 and 0.5 < result["events_over_graph"] < 2.0, result
