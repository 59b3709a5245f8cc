"""`autotune check`: the decision on given samples, verdicts stored from baselines made by hand,
and one real run on the interpreter."""

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

import autotuner.baseline.check
import autotuner.settings
from autotuner.atk import performance_json
from autotuner.atk.generated_block import replace_block
from autotuner.atk.store import FrozenStore
from autotuner.backends.cpu import CpuBackend
from autotuner.baseline.check import check, compare
from core.errors import UserError
from core.paths import frozen_configs_file, port_file
from core.paths import performance_json as performance_json_path
from ops import get_op
from storage import Baseline, CheckVerdict, open_database

from .conftest import autotune_cli

OP = "jagged_to_padded_dense"
CASE = "b1_n8_d16_fp32"
BEFORE = [1.0 + 0.002 * i for i in range(50)]  # 1.0 .. 1.098 ms, median 1.049


def test_clearly_slower_beyond_the_threshold_is_a_regression():
    outcome = compare([x * 1.2 for x in BEFORE], BEFORE, threshold=0.05)
    assert outcome.regressed
    assert outcome.change == pytest.approx(0.2)
    assert outcome.p_value < 1e-6


def test_slower_within_the_threshold_is_not_a_regression_even_if_significant():
    outcome = compare([x * 1.04 for x in BEFORE], BEFORE, threshold=0.05)
    assert not outcome.regressed
    assert outcome.p_value < 0.01  # significant, but only 4% slower


def test_a_larger_threshold_lets_a_larger_slowdown_pass():
    assert not compare([x * 1.2 for x in BEFORE], BEFORE, threshold=0.25).regressed


def test_a_slower_median_inside_noisy_overlapping_samples_is_not_a_regression():
    before = [1.0, 1.6, 0.9, 1.5, 1.2, 0.7, 1.8]
    now = [1.1, 1.7, 0.8, 1.6, 1.3, 0.75, 1.9]  # median 1.2 -> 1.3 ms: +8%
    outcome = compare(now, before, threshold=0.05)
    assert outcome.change == pytest.approx(1.3 / 1.2 - 1)
    assert outcome.p_value > 0.1
    assert not outcome.regressed


def test_faster_is_not_a_regression():
    outcome = compare([x * 0.8 for x in BEFORE], BEFORE, threshold=0.05)
    assert not outcome.regressed and outcome.p_value > 0.99


def freeze_case(soc: str, case_name: str = CASE) -> None:
    """Freeze the default config of the case as the only fwd config of soc: in the performance
    json (the frozen configs' home) and the port's generated block rendered from it."""
    spec = get_op(OP)
    case = spec.case(case_name)
    document = performance_json.read(performance_json_path(OP))
    sections, extra = (
        performance_json.frozen_sections(document),
        performance_json.extra_cases(document),
    )
    for by_soc in sections.values():
        by_soc.get(soc, {}).get("kernels", {}).pop("fwd", None)
    if case.name not in {c.name for c in spec.cases("performance")}:
        extra[case.name] = {"shape": dict(case.shape), "dtype": case.dtype}
    entry = {"config": spec.kernel("fwd").default(case), "label": "M1"}
    section = sections.setdefault(case.name, {}).setdefault(soc, {"label": "M1", "kernels": {}})
    section["kernels"]["fwd"] = entry
    text = performance_json.render(spec, sections, extra)
    performance_json_path(OP).write_text(text)
    path = port_file(OP)
    path.write_text(
        replace_block(path.read_text(), FrozenStore.of(OP, json.loads(text)).block(), path)
    )


class FakeH200(CpuBackend):
    """The interpreter passed off as an H200: the samples are injected, never measured."""

    is_interpreter = False

    def __init__(self) -> None:
        super().__init__()
        self.soc = "H200"


def baseline(**overrides) -> Baseline:
    values = {
        "op": OP, "soc": "H200", "case_name": CASE, "part": "fwd", "source": "port_frozen",
        "label": "M1", "configs": {}, "median_ms": 1.049, "p20_ms": 1.02, "p80_ms": 1.08,
        "n": len(BEFORE), "samples": BEFORE, "interpreter": False, "environment": {},
        "measured_at": datetime(2026, 11, 30, 12, tzinfo=UTC),
    }  # fmt: skip
    return Baseline(**{**values, **overrides})


REFERENCE = [0.5 + 0.001 * i for i in range(50)]  # upstream beside it: median 0.5245 ms


def rounds_of(monkeypatch, *rounds):
    """Make each interleaved measurement return the next (reference, frozen) samples."""
    queue = list(rounds)
    monkeypatch.setattr(
        autotuner.baseline.check, "measure_interleaved", lambda backend, calls: queue.pop(0)
    )
    return queue


def seeded_check_db(tmp_path):
    """Frozen and upstream rows of one baseline run on the H200, with distractors."""
    db = open_database(f"sqlite:///{tmp_path}/x.db")
    old = baseline(samples=[x * 2 for x in BEFORE], measured_at=datetime(2026, 11, 1, tzinfo=UTC))
    newest = baseline()
    upstream = baseline(source="upstream", label=None, median_ms=0.5245, samples=REFERENCE,
                        measured_at=datetime(2026, 11, 30, 11, 59, tzinfo=UTC))  # fmt: skip
    interpreted = baseline(soc="cpu", source="upstream", label=None, median_ms=9.0,
                           interpreter=True, measured_at=datetime(2026, 12, 1, tzinfo=UTC))  # fmt: skip
    on_npu = baseline(soc="950PR", source="upstream", label=None, median_ms=3.0,
                      measured_at=datetime(2026, 12, 2, tzinfo=UTC))  # fmt: skip
    stale = baseline(case_name="b4_n16_d40_fp32")  # baselined once, not frozen on H200 any more
    with db.sessions() as session:
        session.add_all([old, newest, upstream, interpreted, on_npu, stale])
        session.commit()
    return db, newest


def test_a_slower_frozen_port_beside_an_unchanged_reference_is_a_confirmed_regression(
    tree, tmp_path, monkeypatch
):
    freeze_case("H200")
    db, newest = seeded_check_db(tmp_path)
    slower = [x * 1.2 for x in BEFORE]
    queue = rounds_of(monkeypatch, (REFERENCE, slower), (REFERENCE, slower))

    report = check(db, get_op(OP), FakeH200(), threshold=0.05)

    assert report.regressed and queue == []  # two rounds: suspected, then confirmed
    assert report.skipped == ["b4_n16_d40_fp32 fwd: not frozen on H200 any more"]
    (checked,) = report.checked
    assert checked.baseline.id == newest.id
    with db.sessions() as session:
        (stored,) = session.scalars(select(CheckVerdict)).all()
    label = json.loads(frozen_configs_file("H200", OP).read_text())["label"]  # the round's
    assert (stored.case_name, stored.part, stored.label, stored.baseline_id) == (
        CASE, "fwd", label, newest.id,
    )  # fmt: skip
    assert stored.regressed and stored.threshold == 0.05 and stored.rounds == 2
    assert stored.reference_source == "upstream"
    assert stored.change == pytest.approx(0.2) and stored.absolute_change == pytest.approx(0.2)
    assert stored.median_ms == pytest.approx(1.049 * 1.2)
    # The GPU row: not the interpreter's, not upstream measured on an NPU, though both are newer.
    assert stored.gpu_ratio == pytest.approx(1.049 * 1.2 / 0.5245)
    assert stored.environment["soc"] == "H200"
    assert checked.as_dict()["regressed"] is True


def test_drift_that_slows_the_reference_alike_is_no_regression(tree, tmp_path, monkeypatch):
    """A busy or throttled machine: everything 30% slower, the ratio unchanged."""
    freeze_case("H200")
    db, _ = seeded_check_db(tmp_path)
    queue = rounds_of(monkeypatch, ([x * 1.3 for x in REFERENCE], [x * 1.3 for x in BEFORE]))

    (checked,) = check(db, get_op(OP), FakeH200(), threshold=0.05).checked

    v = checked.verdict
    assert not v.regressed and v.rounds == 1 and queue == []
    assert v.change == pytest.approx(0.0, abs=1e-9) and v.absolute_change == pytest.approx(0.3)


def test_a_suspect_the_second_round_clears_is_not_reported(tree, tmp_path, monkeypatch):
    freeze_case("H200")
    db, _ = seeded_check_db(tmp_path)
    rounds_of(monkeypatch, (REFERENCE, [x * 1.2 for x in BEFORE]), (REFERENCE, BEFORE))

    (checked,) = check(db, get_op(OP), FakeH200(), threshold=0.05).checked

    assert not checked.verdict.regressed and checked.verdict.rounds == 2


def test_gpu_soc_picks_the_gpu_baseline_and_an_unknown_one_is_refused(tree, tmp_path, monkeypatch):
    freeze_case("H200")
    db, _ = seeded_check_db(tmp_path)
    with db.sessions() as session:
        session.add(baseline(soc="H100", source="upstream", label=None, median_ms=0.25,
                             measured_at=datetime(2026, 12, 3, tzinfo=UTC)))  # fmt: skip
        session.commit()
    rounds_of(monkeypatch, (REFERENCE, BEFORE), (REFERENCE, BEFORE), (REFERENCE, BEFORE))
    (newest_gpu,) = check(db, get_op(OP), FakeH200(), threshold=0.05).checked
    assert newest_gpu.verdict.gpu_ratio == pytest.approx(1.049 / 0.25)  # the newest GPU row
    (h200,) = check(db, get_op(OP), FakeH200(), threshold=0.05, gpu_soc="H200").checked
    assert h200.verdict.gpu_ratio == pytest.approx(1.049 / 0.5245)
    monkeypatch.setenv("AUTOTUNE_GPU_SOC", "H200")
    autotuner.settings.settings.cache_clear()
    try:
        (by_setting,) = check(db, get_op(OP), FakeH200(), threshold=0.05).checked
    finally:
        monkeypatch.delenv("AUTOTUNE_GPU_SOC")
        autotuner.settings.settings.cache_clear()
    assert by_setting.verdict.gpu_ratio == pytest.approx(1.049 / 0.5245)
    refused = autotune_cli(
        "check", "--op", OP, "--soc", "cpu", "--db", db.url, "--gpu-soc", "950PR"
    )
    assert refused.returncode == 2
    (line,) = refused.stderr.strip().splitlines()
    assert "unknown GPU soc '950PR'" in line


def test_a_frozen_baseline_without_a_reference_is_not_checked(tree, tmp_path, monkeypatch):
    freeze_case("H200")
    db = open_database(f"sqlite:///{tmp_path}/x.db")
    with db.sessions() as session:
        session.add(baseline())  # the port_frozen row alone, as an old database may hold
        session.commit()
    with pytest.raises(UserError, match="no upstream or port_default baseline measured with"):
        check(db, get_op(OP), FakeH200(), threshold=0.05)


def test_nothing_baselined_is_a_one_line_error(tree, tmp_path, cpu):
    db = open_database(f"sqlite:///{tmp_path}/x.db")
    with pytest.raises(UserError, match=r"run `autotune baseline .*` after `autotune freeze"):
        check(db, get_op(OP), cpu, threshold=0.05)


def test_check_on_the_interpreter_end_to_end(tree, tmp_path):
    url = f"sqlite:///{tmp_path}/x.db"
    common = ["--op", OP, "--soc", "cpu", "--db", url]
    nothing = autotune_cli("check", *common)  # a read-only command: no database is created
    assert nothing.returncode == 2 and len(nothing.stderr.splitlines()) == 1
    assert nothing.stderr.startswith("error: no database at ")
    assert not (tmp_path / "x.db").exists()
    open_database(url)
    nothing = autotune_cli("check", *common)
    assert nothing.returncode == 2 and len(nothing.stderr.splitlines()) == 1
    assert nothing.stderr.startswith("error: nothing to check: no frozen")

    freeze_case("cpu")
    made = autotune_cli("baseline", *common, "--case", CASE)
    assert made.returncode == 0, made.stdout + made.stderr
    assert "port_frozen" in made.stdout

    result = autotune_cli("check", *common, "--json")
    assert result.returncode in (0, 1), result.stdout + result.stderr
    (row,) = json.loads(result.stdout)
    assert (row["case"], row["part"], row["interpreter"], row["gpu_ratio"]) == (
        CASE,
        "fwd",
        True,
        None,
    )
    db = open_database(url)
    with db.sessions() as session:
        (stored,) = session.scalars(select(CheckVerdict)).all()
        frozen_baseline = session.get(Baseline, stored.baseline_id)
    assert frozen_baseline.source == "port_frozen" and frozen_baseline.case_name == CASE
    assert result.returncode == int(stored.regressed) == int(row["regressed"])

    table = autotune_cli(
        "check", *common, "--threshold", "100"
    )  # 10000% slower: never a regression
    assert table.returncode == 0, table.stdout + table.stderr
    assert "interpreter times" in table.stdout and CASE in table.stdout
