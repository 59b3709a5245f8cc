"""`autotune baseline`: which sources it times, with which configs, interleaved."""

import pytest
import torch

from autotuner.backends.cpu import CpuBackend
from autotuner.baseline.baseline import (
    FrozenSet,
    measure_interleaved,
    record_baselines,
    runs,
    sampling,
)
from ops import get_op
from storage import Baseline, open_database

from .test_check import CASE, OP, freeze_case


class OrderRecorder(CpuBackend):
    """The interpreter, noting which call each timed sample belongs to."""

    def __init__(self) -> None:
        super().__init__()
        self.order: list[str] = []

    def samples(self, fn, reps, warmup=3, min_ms=0.0):
        self.order += [fn.__name__] * reps
        return [1.0] * reps


def test_sources_of_a_part_are_timed_in_alternating_rounds():
    def first():
        pass

    def second():
        pass

    backend = OrderRecorder()
    samples = measure_interleaved(backend, [first, second])
    rounds, per_round, _ = sampling(backend)
    assert rounds >= 2 and per_round >= 5
    assert [len(s) for s in samples] == [rounds * per_round] * 2
    assert backend.order == (["first"] * per_round + ["second"] * per_round) * rounds


def test_baseline_times_upstream_default_and_frozen_with_their_configs(tree, tmp_path):
    spec = get_op(OP)
    case = spec.case(CASE)
    freeze_case("cpu")
    db = open_database(f"sqlite:///{tmp_path}/b.db")
    rows = record_baselines(db, spec, CpuBackend(), [case])
    by_source = {row.source: row for row in rows}
    assert set(by_source) == {"upstream", "port_default", "port_frozen"}
    default = spec.kernel("fwd").default(case)
    assert by_source["upstream"].configs == {}
    assert by_source["port_default"].configs == {"fwd": default}
    assert by_source["port_frozen"].configs == {"fwd": default}
    for row in rows:
        assert row.interpreter and row.case_name == CASE and row.part == "fwd"
        rounds, per_round, _ = sampling(CpuBackend())
        assert row.n == len(row.samples) >= rounds * per_round
        assert row.p20_ms <= row.median_ms <= row.p80_ms
    with db.sessions() as session:
        assert session.query(Baseline).count() == 3


class SteadyBackend(CpuBackend):
    """The interpreter with 5 rounds (as on a device) and given per-round times."""

    def __init__(self, per_round) -> None:
        super().__init__()
        self.per_round, self.rounds_run = list(per_round), 0

    def samples(self, fn, reps, warmup=3, min_ms=0.0):
        self.rounds_run += 1
        return [self.per_round.pop(0)] * reps


def test_rounds_stop_once_every_medians_spread_is_tight(monkeypatch):
    import autotuner.baseline.baseline as baseline

    monkeypatch.setattr(baseline, "sampling", lambda backend: (5, 10, 0.0))
    steady = SteadyBackend([1.0, 1.01, 0.995, 1.0, 1.0])
    (samples,) = measure_interleaved(steady, [lambda: None], spread=0.02)
    assert steady.rounds_run == baseline.MIN_ROUNDS and len(samples) == 30
    wandering = SteadyBackend([1.0, 1.1, 0.95, 1.0, 1.0])  # a round 10% off: no early stop
    measure_interleaved(wandering, [lambda: None], spread=0.02)
    assert wandering.rounds_run == 5
    fixed = SteadyBackend([1.0] * 5)
    measure_interleaved(fixed, [lambda: None], spread=None)
    assert fixed.rounds_run == 5


def test_warm_up_processes_run_every_call_of_the_cases_once(tree):
    """Spawned processes (here on the interpreter) run upstream's and the port's calls once."""
    from autotuner.baseline.warm import warm

    spec = get_op(OP)
    freeze_case("cpu")
    assert warm([(OP, spec.case(CASE))], "cpu", jobs=1) == 3  # upstream, default, frozen
    assert warm([(OP, spec.case(CASE))], "cpu", jobs=0) == 0


@pytest.mark.parametrize(
    "op",
    ["addmm", "layer_norm", "rms_norm", "swish_layer_norm", "layer_norm_mul_dropout",
     "group_norm_mul_dropout"],
)  # fmt: skip
def test_torch_eager_is_a_source_that_equals_the_golden(op):
    """The op's torch form in the case dtype (its forward, autograd's backward into the inputs
    that have gradients) against the float64 golden, through the baseline's sources."""
    spec = get_op(op)
    case = spec.cases("accuracy")[0]
    inputs = spec.make_inputs(case, torch.device("cpu"))
    golden = spec.reference(inputs)
    for part in spec.parts:
        (call,) = [
            c for s, _, c in runs(spec, case, inputs, part, FrozenSet(None, {})) if s == "torch"
        ]
        if part == "fwd":
            for name, got in call().items():
                assert torch.allclose(got.double(), golden[name], atol=1e-5), name
        else:
            for got, name in zip(call(), spec.torch_grad_inputs, strict=True):
                assert torch.allclose(got.double(), golden[f"d{name}"], atol=1e-4), name


def test_an_op_without_a_torch_form_times_no_torch_part():
    spec = get_op(OP)
    case = spec.case(CASE)
    inputs = spec.make_inputs(case, torch.device("cpu"))
    sources = {s: c for s, _, c in runs(spec, case, inputs, "fwd", FrozenSet(None, {}))}
    assert sources["torch"] is None and sources["upstream"] is not None
