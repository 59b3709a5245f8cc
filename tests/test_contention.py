"""A check on a shared device: references of different durations that move apart make a
(case, part) `contended`, never "ok". The device is a fake timer under the real measurement
(`Backend.samples`, `measure_interleaved`) and the real verdict."""

from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select
from typer.testing import CliRunner

import autotuner.backends
from api.main import create_app
from autotune.cli import app
from autotuner.backends.cpu import CpuBackend
from autotuner.baseline.check import check
from autotuner.measure.contention import Reference, contention
from autotuner.measure.device_load import Probe
from ops import get_op
from storage import Baseline, CheckVerdict, open_database

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
    calibrates = True

    def __init__(self, durations, slowdown=1.0, gap_ms=2.0, frozen_slower=1.0, others=None) -> None:
        super().__init__()
        self.soc = "H200"
        self.durations, self.slowdown, self.gap_ms = durations, slowdown, gap_ms
        self.frozen_slower = frozen_slower
        self.others = others  # what NVML would list besides this process; None: no NVML
        self.seen: list = []

    def device_activity(self, since):
        return None if self.others is None else {"listed": 1 + self.others,
                                                  "other_processes": self.others}  # fmt: skip

    def samples(self, fn, reps, warmup=3, min_ms=0.0):
        if isinstance(fn, Probe):  # a calibration kernel, never run: the co-load moves it alike
            quiet = PROBE_MS[fn.name]
            return spread(quiet * (self.slowdown if quiet > self.gap_ms else 1.0), max(reps, 2))
        return super().samples(fn, reps, warmup, min_ms)

    def _elapsed_ms(self, fn, reps):
        if fn not in self.seen:
            self.seen.append(fn)
        index = self.seen.index(fn)
        quiet = self.durations[index]
        now = quiet * (self.slowdown if quiet > self.gap_ms else 1.0)
        if index == len(self.durations) - 1:
            now *= self.frozen_slower
        return spread(now, max(reps, 2))


#: The calibration probes' quiet medians (ms), about an H200's.
PROBE_MS = {"mm512": 0.01, "mm1024": 0.04, "mm2048": 0.3, "mm4096": 2.3}


def seeded(tmp_path, sources=("upstream", "port_default"), calibration=None, url=None):
    db = open_database(url or f"sqlite:///{tmp_path}/x.db")
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
            device_load={"calibration": {"after": calibration}} if calibration else None,
            measured_at=at,
        )  # fmt: skip
        for source in (*sources, "port_frozen")
    ]
    with db.sessions() as session:
        session.add_all(rows)
        session.commit()
    return db


def verdict_of(tmp_path, backend, sources=("upstream", "port_default"), calibration=None, url=None):
    freeze_case("H200")
    db = seeded(tmp_path, sources, calibration, url)
    (checked,) = check(db, get_op(OP), backend, threshold=0.05).checked
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


def test_a_load_that_slows_part_and_reference_alike_is_seen_by_the_calibration_not_ok(
    tree, tmp_path, any_db
):
    """Every call over 0.1 ms 1.6x slower: the ratio holds still, the probe nearest the part
    (mm2048, 0.3 ms) moved since its baseline: contended, where the ratio alone said ok."""
    shared = SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.6, gap_ms=0.1)
    v = verdict_of(tmp_path, shared, calibration=PROBE_MS, url=any_db)
    assert v.outcome == "contended" and v.change == pytest.approx(0, abs=1e-3)
    assert "calibration mm2048 (0.3 ms) moved +60.0% since baseline" in v.contention
    db = open_database(any_db)
    with db.sessions() as session:
        (stored,) = session.scalars(select(CheckVerdict)).all()
    assert stored.device_load["calibration"]["before"]["mm2048"] == pytest.approx(0.48)
    assert stored.device_load["why"] == v.contention


def test_a_quiet_device_seen_by_the_calibration_is_ok(tree, tmp_path):
    quiet = verdict_of(tmp_path, SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN]), calibration=PROBE_MS)
    assert quiet.outcome == "ok" and quiet.device_load["why"] is None


def test_another_process_the_device_lists_makes_a_part_contended(tree, tmp_path):
    v = verdict_of(tmp_path, SharedH200([UPSTREAM, PORT_DEFAULT, FROZEN], others=1))
    assert v.outcome == "contended" and v.contention == "the device lists 1 other compute process"
    assert v.device_load["activity"]["other_processes"] == 1


@pytest.mark.parametrize(("frozen_slower", "outcome"), [(1.5, "regressed"), (1.1, "contended")])
def test_under_a_seen_load_a_regression_must_outgrow_what_the_load_moved(
    tree, tmp_path, frozen_slower, outcome
):
    """The load slows every call 8%: the probe moved 8%, so a ratio grown 10% may be the load's
    doing (contended) and one grown 50% is not (regressed, beside a reference of similar
    duration)."""
    shared = SharedH200(
        [UPSTREAM, PORT_DEFAULT, FROZEN], slowdown=1.08, gap_ms=0.0, frozen_slower=frozen_slower
    )
    v = verdict_of(tmp_path, shared, calibration=PROBE_MS)
    assert v.outcome == outcome and v.reference_source == "port_default"
    assert v.change == pytest.approx(frozen_slower - 1, abs=1e-3)


def test_the_coload_benchmark_counts_verdicts_and_names_slowed_parts_reported_ok(tmp_path):
    """benchmarks/check_coload.py's summary over check JSON as `autotune check --json` writes
    it: a part slowed >= 10% on a quiet device that came back ok under the load is named."""
    import json
    import sys

    from .conftest import ROOT

    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import check_coload
    finally:
        sys.path.pop(0)

    def verdict(case, outcome, change=0.0):
        return {"case": case, "part": "fwd", "outcome": outcome, "absolute_change": change,
                "change": change, "contention": None}  # fmt: skip

    files = {
        "quiet": [verdict("a", "ok"), verdict("b", "ok")],
        "loaded": [verdict("a", "contended"), verdict("b", "regressed")],
        "slower_quiet": [verdict("a", "regressed", 0.25), verdict("b", "ok", 0.04)],
        "slower_loaded": [verdict("a", "ok"), verdict("b", "ok")],
    }
    for phase, verdicts in files.items():
        (tmp_path / f"check_{phase}_{OP}.json").write_text(json.dumps(verdicts))
    result = check_coload.summary(tmp_path, [OP], ["slower_loaded other_op"])
    assert result["counts"]["loaded"] == {"contended": 1, "regressed": 1}
    assert result["unchanged_regressed"] == 1
    (missed,) = result["slowed_10%_reported_ok_loaded"]
    assert (missed["case"], missed["quiet_slowdown"], missed["loaded"]) == ("a", 0.25, "ok")
    check_coload.write_summary(tmp_path, result)
    text = (tmp_path / "summary.txt").read_text()
    assert "parts slowed >= 10% quiet and ok loaded: 1" in text
    assert "not run (budget): slower_loaded other_op" in text
