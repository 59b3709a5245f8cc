"""A check on a shared device: references of different durations that move apart make a
(case, part) `contended`, never "ok". The device is a fake timer under the real measurement
(`Backend.samples`, `measure_interleaved`) and the real verdict."""

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import autotuner.backends
from api.main import create_app
from autotuner.backends.cpu import CpuBackend
from autotuner.baseline.check import check
from autotuner.cli import app
from autotuner.measure.contention import Reference, contention
from ops import get_op
from storage import Baseline, open_database

from .test_check import CASE, OP, freeze_case

#: Quiet medians (ms) at baseline time: upstream long, the port short, its default between.
UPSTREAM, PORT_DEFAULT, FROZEN = 8.0, 0.8, 0.5


def spread(median: float, n: int = 50) -> list[float]:
    """`n` samples spread evenly over +-1% of `median`, whose median it is."""
    return [median * (0.99 + 0.02 * i / (n - 1)) for i in range(n)]


class SharedH200(CpuBackend):
    """An H200 whose timer answers from a model: each distinct call has a quiet duration (given
    in the order the check first times them), a co-load slows calls longer than `gap_ms` by
    `slowdown` (they share the GPU with its bursts; shorter ones slip between them), and
    `frozen_slower` slows the frozen part, the last call, as a worse config would."""

    is_interpreter = False

    def __init__(self, durations, slowdown=1.0, gap_ms=2.0, frozen_slower=1.0) -> None:
        super().__init__()
        self.soc = "H200"
        self.durations, self.slowdown, self.gap_ms = durations, slowdown, gap_ms
        self.frozen_slower = frozen_slower
        self.seen: list = []

    def _elapsed_ms(self, fn, reps):
        if fn not in self.seen:
            self.seen.append(fn)
        index = self.seen.index(fn)
        quiet = self.durations[index]
        now = quiet * (self.slowdown if quiet > self.gap_ms else 1.0)
        if index == len(self.durations) - 1:
            now *= self.frozen_slower
        return spread(now, max(reps, 2))


def seeded(tmp_path, sources=("upstream", "port_default")):
    db = open_database(f"sqlite:///{tmp_path}/x.db")
    medians = {"upstream": UPSTREAM, "port_default": PORT_DEFAULT, "port_frozen": FROZEN}
    at = datetime(2026, 11, 30, 12, tzinfo=UTC)
    rows = [
        Baseline(
            op=OP,
            soc="H200",
            case_name=CASE,
            part="fwd",
            source=source,
            label="M1" if source == "port_frozen" else None,
            configs={},
            median_ms=medians[source],
            p20_ms=medians[source],
            p80_ms=medians[source],
            n=50,
            samples=spread(medians[source]),
            interpreter=False,
            backend="cuda",
            environment={},
            measured_at=at,
        )  # fmt: skip
        for source in (*sources, "port_frozen")
    ]
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
    return db


def verdict_of(tmp_path, backend, sources=("upstream", "port_default")):
    freeze_case("H200")
    (checked,) = check(seeded(tmp_path, sources), get_op(OP), backend, threshold=0.05).checked
    return checked.verdict


def test_a_reference_that_drifts_while_the_frozen_part_does_not_is_contended(tree, tmp_path):
    v = verdict_of(tmp_path, SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.6))
    assert v.outcome == "contended" and not v.regressed
    assert "upstream (8 ms) moved +60.0%, port_default (0.8 ms) +0.0%" in v.contention
    # judged against the reference closest in duration, which the co-load did not move
    assert v.reference_source == "port_default" and v.change == pytest.approx(0, abs=1e-3)


def test_a_quiet_device_and_uniform_drift_are_ok(tree, tmp_path):
    quiet = verdict_of(tmp_path, SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN]))
    assert quiet.outcome == "ok" and quiet.contention is None


def test_clock_drift_that_moves_every_duration_alike_is_not_contention(tree, tmp_path):
    slow = SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.3, gap_ms=0.0)
    v = verdict_of(tmp_path, slow)
    assert v.outcome == "ok" and v.absolute_change == pytest.approx(0.3, abs=1e-3)


def test_a_regression_beside_a_reference_of_similar_duration_is_reported_under_contention(
    tree, tmp_path
):
    shared = SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.6, frozen_slower=1.1)
    v = verdict_of(tmp_path, shared)
    assert v.outcome == "regressed" and v.regressed and v.rounds == 2
    assert v.change == pytest.approx(0.1, abs=1e-3)


def test_a_regression_the_drifting_long_reference_would_hide_is_contended_not_ok(tree, tmp_path):
    """Upstream alone: its 1.6x slow-down would turn a 20% regression into a -25% ratio."""
    shared = SharedH200([UPSTREAM, FROZEN], slowdown=1.6, frozen_slower=1.2)
    v = verdict_of(tmp_path, shared, sources=("upstream",))
    assert v.outcome == "contended" and v.change < -0.2
    assert "no reference is within 2x of the part's 0.5 ms" in v.contention


def test_a_large_regression_of_a_part_shorter_than_its_drifting_reference_is_reported(
    tree, tmp_path
):
    """Measured on the H200: frozen jagged_softmax configs made 47x slower beside the co-load."""
    shared = SharedH200([UPSTREAM, FROZEN], slowdown=1.6, frozen_slower=3.0)
    v = verdict_of(tmp_path, shared, sources=("upstream",))
    assert v.outcome == "regressed" and v.contention is not None
    assert v.absolute_change == pytest.approx(2.0, abs=1e-3)


def test_check_exits_3_when_contended_and_says_so_and_the_dashboard_shows_it(
    tree, tmp_path, monkeypatch
):
    freeze_case("H200")
    db = seeded(tmp_path)
    shared = SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.6)
    monkeypatch.setattr(autotuner.backends, "get_backend", lambda soc: shared)
    result = CliRunner().invoke(app, ["check", "--op", OP, "--soc", "H200", "--db", db.url])
    assert result.exit_code == 3, result.output
    assert "1 checked: 0 regressed, 1 contended, 0 ok" in result.output
    assert f"contended: {CASE} fwd: the device looks shared" in result.output
    html = TestClient(create_app(db.url)).get("/regressions").text
    assert "0 of 1 latest checks regressed, 1 contended" in html
    assert f'<tr class="contended" data-op="{OP}" data-case="{CASE}"' in html


@pytest.mark.parametrize(
    ("drifts", "why"),
    [
        ({"upstream": 1.02, "port_default": 1.0}, None),  # within noise
        ({"upstream": 1.6, "port_default": 1.0}, "upstream (8 ms) moved +60.0%"),
        ({"upstream": 1.3, "port_default": 1.3}, None),  # alike: clocks, not contention
    ],
)
def test_contention_of_given_references(drifts, why):
    before = {"upstream": UPSTREAM, "port_default": PORT_DEFAULT}
    refs = [Reference(s, before[s], before[s] * d) for s, d in drifts.items()]
    found = contention(refs, FROZEN, noise=0.03, factor=2.0)
    assert found == why or (why and found.startswith(why))
