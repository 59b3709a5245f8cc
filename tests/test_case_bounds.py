"""User cases are bounded: a case too big for this machine (or for `max_case_bytes`) is one line
before anything is written or allocated; long lengths live beside the cases file; a run that
fails leaves no case and no study."""

import time

import pytest
import yaml
from sqlalchemy import select

from autotuner.cases import bound, store
from autotuner.cases.options import CaseRequest
from autotuner.search import runner
from autotuner.search.request import RunRequest
from autotuner.settings import settings
from core.errors import UserError
from core.paths import cases_file
from ops import get_op
from ops.spec import Footprint
from storage import StudyRecord, UserCase, open_database

from .conftest import autotune_cli

OP = "jagged_to_padded_dense"
SPEC = get_op(OP)
HUGE = "B=100000000,max_seq_len=256,D=64"


def test_the_footprint_grows_with_the_shape_and_the_estimate_matches_it():
    small = SPEC.footprint(SPEC.case_from_shape({"B": 64, "max_seq_len": 32, "D": 8}, "fp32", None))
    assert small.device > 64 * 32 * 8 * 4  # the padded output alone
    assert small.host > 2 * small.device  # the float64 golden besides the inputs
    shape = {"B": 20000, "max_seq_len": 64, "D": 16}
    exact = SPEC.footprint(SPEC.case_from_shape(shape, "fp16", None))
    estimated = bound.estimate(SPEC, shape, "fp16")  # from 4096 of the 20000 sequences
    assert abs(estimated.device - exact.device) < 0.02 * exact.device
    layer_norm = get_op("layer_norm")
    dense = bound.estimate(layer_norm, {"N": 4, "D": 100_000_000}, "fp32")
    assert dense.device >= 2 * 4 * 100_000_000 * 4


def test_too_big_names_both_figures():
    room = bound.Room(host=10**9, device=None, shared=True, capped=False)
    assert bound.too_big(Footprint(host=10**8, device=10**8), room) is None
    why = bound.too_big(Footprint(host=6 * 10**8, device=5 * 10**8), room)
    assert why == (
        "needs about 1.1 GB of host memory (inputs, outputs, float64 golden), and 1 GB is available"
    )
    device = bound.Room(host=10**12, device=2 * 10**9, shared=False, capped=True)
    why = bound.too_big(Footprint(host=10**9, device=3 * 10**9), device)
    assert why is not None and "3 GB of device memory" in why and "2 GB is free" in why
    assert why.endswith("(AUTOTUNE_MAX_CASE_BYTES)")


def test_the_cap_setting_bounds_a_case(monkeypatch):
    monkeypatch.setenv("AUTOTUNE_MAX_CASE_BYTES", "1MB")
    settings.cache_clear()
    try:
        assert settings().max_case_bytes == 10**6
        room = bound.Room.here()
        assert room.host == 10**6 and room.capped
        CaseRequest(shape="B=3,max_seq_len=20,D=8").entries(SPEC)  # a few KB: fits
        with pytest.raises(UserError, match=r"and 1 MB is available \(AUTOTUNE_MAX_CASE_BYTES\)"):
            CaseRequest(shape="B=512,max_seq_len=256,D=64").entries(SPEC)
        monkeypatch.setenv("AUTOTUNE_MAX_CASE_BYTES", "lots")
        settings.cache_clear()
        with pytest.raises(UserError, match="AUTOTUNE_MAX_CASE_BYTES='lots'"):
            settings()
    finally:
        settings.cache_clear()


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--op", OP, "--soc", "cpu", "--shape", HUGE),
        ("verify", "--op", OP, "--soc", "cpu", "--shape", HUGE),
        (
            "run",
            "--op",
            OP,
            "--soc",
            "cpu",
            "--shape",
            HUGE,
            "--lengths-dist",
            "uniform:low=1,high=9",
        ),
        ("run", "--op", "layer_norm", "--soc", "cpu", "--shape", "N=4,D=100000000000"),
    ],
)
def test_a_huge_shape_is_refused_in_one_line_before_anything_is_written(tree, command):
    started = time.monotonic()
    result = autotune_cli(*command, "--db", f"sqlite:///{tree / 'never.db'}", cwd=tree)
    assert time.monotonic() - started < 30
    assert result.returncode == 2, result.stdout + result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "of host memory" in line and "is available" in line and "refused" in line
    assert not (tree / "cases").exists() and not (tree / "never.db").exists()
    assert not list(tree.glob("*.db"))


def test_a_huge_cases_file_entry_is_refused_before_its_lengths_are_made(tree):
    path = tree / "captured.yaml"
    shape = dict(x.split("=") for x in HUGE.split(","))
    entry = {"op": OP, "shape": {k: int(v) for k, v in shape.items()}, "dtype": "float32"}
    path.write_text(
        yaml.safe_dump({"cases": [{**entry, "histogram": {"edges": [0, 8], "counts": [1]}}]})
    )
    started = time.monotonic()
    with pytest.raises(UserError, match="of host memory"):
        CaseRequest(cases_file=path).entries(SPEC)
    assert time.monotonic() - started < 5


def test_long_lengths_are_kept_beside_the_cases_file_and_checked(tree, tmp_path):
    lengths = tmp_path / "lengths.txt"
    lengths.write_text("".join(f"{i % 17}\n" for i in range(5000)))
    (entry,) = CaseRequest(shape="B=5000,max_seq_len=16,D=4", lengths_file=lengths).entries(SPEC)
    db = open_database(f"sqlite:///{tmp_path / 'cases.db'}")
    assert store.register(SPEC, [entry], db) == [entry["name"]]
    text = cases_file(OP).read_text()
    assert len(text) < 1000, text
    (written,) = yaml.safe_load(text)["cases"]
    beside = cases_file(OP).parent / written["lengths"]
    assert (
        written["lengths"].startswith(f"{OP}.lengths/")
        and beside.read_text() == lengths.read_text()
    )
    ((case, stored),) = store.user_cases(SPEC, "performance")
    assert case.name == entry["name"] and stored["lengths"] == entry["lengths"]
    with db.sessions() as session:  # the database keeps the lengths themselves
        assert session.scalar(select(UserCase.entry))["lengths"] == entry["lengths"]
    beside.write_text(beside.read_text().replace("16\n", "15\n", 1))
    with pytest.raises(UserError, match="does not match its hash"):
        store.user_cases(SPEC, "performance")
    cases_file(OP).write_text(text.replace(written["lengths"], "../../etc/passwd"))
    with pytest.raises(UserError, match="neither a list nor"):
        store.user_cases(SPEC, "performance")


def test_a_failed_run_leaves_no_case_and_no_study(tree, tmp_path):
    url = f"sqlite:///{tmp_path / 'failed.db'}"

    def dies(progress):
        raise RuntimeError("the run dies while measuring")

    with pytest.raises(RuntimeError, match="dies"):
        runner.run(
            RunRequest(
                OP,
                "cpu",
                trials=2,
                db_url=url,
                timeout_s=60,
                case_request=CaseRequest(shape="B=3,max_seq_len=20,D=8"),
            ),
            on_progress=dies,
        )
    assert not cases_file(OP).exists()
    with open_database(url).sessions() as session:
        assert session.scalars(select(StudyRecord.name)).all() == []


def test_capture_leaves_out_a_case_too_big_to_tune_here(monkeypatch):
    from autotuner.cases.capture import Recorder
    from autotuner.cases.store import CaseWarning

    recorder = Recorder()
    recorder.record(SPEC, "fwd", {"B": 4, "max_seq_len": 8, "D": 4}, "float32", None)
    recorder.record(SPEC, "fwd", {"B": 5000, "max_seq_len": 256, "D": 64}, "float32", None)
    monkeypatch.setenv("AUTOTUNE_MAX_CASE_BYTES", "1MB")
    settings.cache_clear()
    try:
        with pytest.warns(
            CaseWarning,
            match=r"B=5000,max_seq_len=256,D=64 of .* 1 MB is available.*; not captured",
        ):
            (kept,) = recorder.entries()
    finally:
        settings.cache_clear()
    assert kept["shape"]["B"] == 4
