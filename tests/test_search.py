"""`autotune run` on the interpreter: trials in SQLite, failures recorded, resume, sharing, Ctrl-C."""

import os
import signal
import subprocess
import sys
import time

import optuna
import pytest
from optuna.trial import TrialState
from sqlalchemy import func, select

from autotuner.search import runner
from autotuner.search.request import RunRequest
from autotuner.search.space import config_key
from autotuner.search.verdict import Outcome, Verdict
from autotuner.settings import settings
from core.errors import UserError
from ops import all_ops
from storage import Claim, Run, StudyRecord, open_database

from . import faulty_ops
from .conftest import ROOT, autotune_cli

COPY_OP, COPY_CASE = "jagged_to_padded_dense", "b4_n16_d40_fp32"


def tune(db_url, op=COPY_OP, case=COPY_CASE, trials=6, **kw):
    return runner.run(
        RunRequest(
            op,
            "cpu",
            kernels=kw.pop("kernels", None),
            cases=[case],
            trials=trials,
            db_url=db_url,
            timeout_s=kw.pop("timeout_s", 60.0),
            **kw,
        )
    )


def trials_of(db_url, name):
    return optuna.load_study(study_name=name, storage=db_url).get_trials(deepcopy=False)


def _settled(winner: dict) -> dict:
    """The JSON form of a verdict whose winner beat the default (an empty config)."""
    return Verdict(
        outcome=Outcome.BEATS_DEFAULT, method="test", complete_trials=1, retimed=(),
        default_config={}, winner=winner, winner_trial=0, winner_median_ms=1.0,
        default_median_ms=2.0, speedup=2.0, p_value=None, beats_default=True,
    ).as_dict()  # fmt: skip


@pytest.fixture
def db_url(tmp_path):
    return f"sqlite:///{tmp_path / 'autotune.db'}"


def test_a_small_run_records_every_trial(db_url):
    (record,) = tune(db_url, trials=6)
    assert record.name.startswith(f"{COPY_OP}/fwd/{COPY_CASE}/cpu/")
    trials = trials_of(db_url, record.name)
    measured = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(measured) == 6
    first = min(measured, key=lambda t: t.number)
    assert first.number == 0
    default = {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4, "PROGRAMS": 0}  # classic grid
    assert first.user_attrs["config"] == default
    assert first.user_attrs["source"] == "default"
    for t in measured:
        attrs = t.user_attrs
        assert attrs["p20_ms"] <= attrs["median_ms"] <= attrs["p80_ms"] and attrs["n"] >= 3
        assert t.value == attrs["median_ms"] and attrs["compile_s"] > 0 and attrs["error"] == 0.0
        assert {"log2_BLOCK_ROW", "log2_BLOCK_COL", "log2_num_warps", "rank_PROGRAMS"} == set(
            t.params
        )
        assert 2 ** t.params["log2_BLOCK_ROW"] == attrs["config"]["BLOCK_ROW"]
    assert len({config_key(t.user_attrs["config"]) for t in measured}) == 6
    infeasible = [t for t in trials if t.state == TrialState.FAIL]
    assert infeasible and all(t.user_attrs["category"] == "infeasible" for t in infeasible)
    assert all("larger than" in t.user_attrs["message"] for t in infeasible)
    verdict = record.verdict
    assert verdict["complete_trials"] == 6 and verdict["default_median_ms"] > 0
    assert verdict["winner"] in [t.user_attrs["config"] for t in measured]
    db = open_database(db_url)
    with db.sessions() as session:
        run = session.scalars(select(Run)).one()
        assert (
            run.status == "finished"
            and run.environment["soc"] == "cpu"
            and run.environment["interpreter"]
        )
        assert {"torch", "triton", "python", "project_commit", "optuna"} <= set(run.environment)
        slots = sorted(c.slot for c in session.scalars(select(Claim)) if c.slot is not None)
    assert slots == list(range(6))


def test_the_winners_gain_is_a_setting(db_url, monkeypatch):
    """AUTOTUNE_MIN_GAIN: at 90% no config beats the default, and the verdict says the rule."""
    monkeypatch.setenv("AUTOTUNE_MIN_GAIN", "0.9")
    settings.cache_clear()
    try:
        (record,) = tune(db_url, trials=3)
    finally:
        monkeypatch.delenv("AUTOTUNE_MIN_GAIN")
        settings.cache_clear()
    verdict = record.verdict
    assert "a winner must be >= 90% faster than the default" in verdict["method"]
    assert not verdict["beats_default"] and verdict["winner"] == verdict["default_config"]
    monkeypatch.setenv("AUTOTUNE_MIN_GAIN", "1.5")
    settings.cache_clear()
    try:
        bad = autotune_cli(*run_args(COPY_CASE, 2, db_url))
    finally:
        settings.cache_clear()
    assert bad.returncode == 2
    assert bad.stderr == "error: AUTOTUNE_MIN_GAIN='1.5': Input should be less than 1\n"


def test_resume_adds_only_the_missing_trials(db_url):
    (first,) = tune(db_url, trials=4)
    before = {
        t.number: (t.value, config_key(t.user_attrs["config"]))
        for t in trials_of(db_url, first.name)
        if t.state == TrialState.COMPLETE
    }
    (second,) = tune(db_url, trials=7)
    after = {
        t.number: (t.value, config_key(t.user_attrs["config"]))
        for t in trials_of(db_url, second.name)
        if t.state == TrialState.COMPLETE
    }
    assert second.name == first.name and len(after) == 7
    assert all(after[n] == v for n, v in before.items())  # nothing re-measured
    assert len({key for _, key in after.values()}) == 7
    tune(db_url, trials=7)
    assert len([t for t in trials_of(db_url, first.name) if t.state == TrialState.COMPLETE]) == 7


@pytest.fixture
def faulty(tree, monkeypatch):
    faulty_ops.install(tree)
    monkeypatch.setenv("AUTOTUNE_OPS_MODULES", "tests.faulty_ops")
    all_ops.cache_clear()
    yield faulty_ops.SPEC
    all_ops.cache_clear()


def test_a_run_whose_default_fails_says_so(db_url, faulty):
    """The default is upstream's own launch: when it fails, the fault is the port's or the tool's
    (an fp32 tl.dot compiled with the NPU's precision on a GPU failed every trial of 13 studies,
    and `run --quiet` said nothing)."""
    run = ("run", "--op", faulty.name, "--soc", "cpu", "--trials", "3", "--quiet", "--db", db_url)
    failing = autotune_cli(*run, env={"FAULTY_DEFAULT_BLOCK": str(faulty_ops.WRONG)})
    assert failing.returncode == 0, failing.stderr[-2000:]
    assert (
        "warning: fwd n1000 on cpu: the default config (upstream's launch) failed, wrong_result"
        in (failing.stderr)
    )
    passing = autotune_cli(*run, "--restart")
    assert passing.returncode == 0 and "warning" not in passing.stderr, passing.stderr[-2000:]


def test_crash_hang_and_wrong_results_are_recorded_failures(db_url, faulty):
    (record,) = tune(db_url, op=faulty.name, case="n1000", trials=10, timeout_s=8.0)
    assert record.strategy == "exhaustive"
    by_block = {
        t.user_attrs["config"]["BLOCK"]: t
        for t in trials_of(db_url, record.name)
        if t.state != TrialState.PRUNED
    }
    assert (
        by_block[faulty_ops.CRASH].state == TrialState.FAIL
        and by_block[faulty_ops.CRASH].user_attrs["category"] == "crash"
    )
    assert by_block[faulty_ops.HANG].user_attrs["category"] == "timeout"
    wrong = by_block[faulty_ops.WRONG]
    assert (
        wrong.user_attrs["category"] == "wrong_result"
        and "relative error" in wrong.user_attrs["message"]
    )
    few_off = by_block[faulty_ops.FEW_OFF]
    assert few_off.user_attrs["error"] < faulty.tolerance["float32"]  # the norm would pass it
    assert few_off.user_attrs["category"] == "wrong_result"
    assert few_off.user_attrs["message"].startswith("y against the default config: MARE ratio inf")
    synced = by_block[faulty_ops.SYNC].user_attrs
    assert synced["category"] == "host_sync" and "__int__ at faulty_scale.py" in synced["message"]
    assert by_block[256].user_attrs["category"] == "infeasible"
    assert by_block[256].user_attrs["message"] == "BLOCK 256 is excluded by this test"
    assert {b for b, t in by_block.items() if t.state == TrialState.COMPLETE} == {16, 512}
    assert record.verdict is not None and record.verdict["complete_trials"] == 2


def test_bad_selections(db_url):
    with pytest.raises(
        ValueError,
        match="unknown kernel 'fwdd' for jagged_dense_flash_attention; valid: fwd, bwd_preprocess, bwd_dv_db_dq, bwd_dk",
    ):
        runner.run(
            RunRequest(
                "jagged_dense_flash_attention",
                "cpu",
                kernels=["fwdd"],
                trials=4,
                db_url=db_url,
                timeout_s=10,
            )
        )
    with pytest.raises(
        UserError,
        match=r"unknown case 'b9' for jagged_to_padded_dense on cpu \(accuracy cases\); valid: b1_n8_d16_fp32, ",
    ):
        runner.run(
            RunRequest(
                COPY_OP,
                "cpu",
                cases=["b9"],
                trials=4,
                db_url=db_url,
                timeout_s=10,
            )
        )
    for trials in (0, -3):
        with pytest.raises(UserError, match="--trials must be a positive number"):
            runner.run(
                RunRequest(
                    COPY_OP,
                    "cpu",
                    trials=trials,
                    db_url=db_url,
                    timeout_s=10,
                )
            )


def autotune(*args, **popen):
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.Popen(
        [sys.executable, "-m", "autotuner", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
        **popen,
    )


def run_args(case: str, trials: int, db_url: str) -> tuple[str, ...]:
    return (
        "run",
        "--op",
        COPY_OP,
        "--soc",
        "cpu",
        "--case",
        case,
        "--trials",
        str(trials),
        "--db",
        db_url,
        "--quiet",
    )


def test_two_processes_share_one_study(db_url):
    args = run_args("b6_n33_d7_fp32", 8, db_url)
    first, second = autotune(*args), autotune(*args, start_new_session=True)
    for process in (first, second):
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    db = open_database(db_url)
    with db.sessions() as session:
        (record,) = session.scalars(select(StudyRecord)).all()
        claims = list(session.scalars(select(Claim).where(Claim.slot.is_not(None))))
    complete = [t for t in trials_of(db_url, record.name) if t.state == TrialState.COMPLETE]
    assert len(complete) == 8 and len(claims) == 8
    assert len({config_key(t.user_attrs["config"]) for t in complete}) == 8
    # Both ran against the one study (who measured how many is a matter of timing).
    with db.sessions() as session:
        assert [r.status for r in session.scalars(select(Run))] == ["finished", "finished"]


def test_ctrl_c_leaves_the_database_consistent_and_resume_finishes(db_url):
    args = run_args(COPY_CASE, 12, db_url)
    process = autotune(*args)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        time.sleep(1)
        try:
            db = open_database(db_url)
            with db.sessions() as session:
                done = [c for c in session.scalars(select(Claim)) if c.state == "complete"]
            if len(done) >= 3:
                break
        except Exception:  # noqa: BLE001 - the schema may not exist yet
            continue
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted: the database is consistent" in err
    with db.sessions() as session:
        assert all(c.state != "running" for c in session.scalars(select(Claim)))
        (record,) = session.scalars(select(StudyRecord)).all()
        assert session.scalars(select(Run)).one().status == "interrupted"
    assert all(t.state != TrialState.RUNNING for t in trials_of(db_url, record.name))
    resumed = autotune(*args)
    resumed.communicate(timeout=300)
    assert resumed.returncode == 0
    complete = [t for t in trials_of(db_url, record.name) if t.state == TrialState.COMPLETE]
    assert len(complete) == 12 and len({config_key(t.user_attrs["config"]) for t in complete}) == 12


def test_a_share_of_the_space_as_budget(db_url):
    (record,) = tune(db_url, trials=0.06)  # 14 of the 240 (tiles x warps x program counts)
    assert record.budget == int(0.06 * record.feasible_size) and record.strategy == "local"
    measured = [t for t in trials_of(db_url, record.name) if t.state == TrialState.COMPLETE]
    assert len(measured) == record.budget
    sources = [t.user_attrs["source"] for t in sorted(measured, key=lambda t: t.number)]
    assert sources[0] == "default" and "local" in sources


def test_a_compile_worker_keeps_only_what_the_kernel_reads():
    """Its inputs are the kernel's alone, without the float64 golden (tens of GiB on big cases),
    here a backward kernel's, whose inputs come from a reference in the case dtype."""
    import torch

    from autotuner.search.trial import compile_inputs
    from ops import get_op

    spec = get_op("jagged_dense_flash_attention")
    case = spec.case("b1_n16_d16_t16_fp32")
    _, kernel, inputs = compile_inputs(spec.name, "bwd_dk", case, torch.device("cpu"))
    assert kernel.name == "bwd_dk"
    assert {"lse", "delta"} <= set(inputs)
    assert all(t.dtype != torch.float64 for t in inputs.values())
    default = kernel.default(case)
    assert {"dk"} <= set(spec.launch("bwd_dk", inputs, default))


def test_compile_inputs_of_16_bit_cases_have_the_case_dtype_references_dtypes():
    """A 16-bit case's intermediates come from a float32 reference, cast: every kernel of every
    op gets inputs of the same dtypes, shapes and strides as from a reference in the case
    dtype."""
    import torch

    from autotuner.search.trial import compile_inputs
    from ops import all_ops

    def described(inputs):
        return {
            k: (t.dtype, t.shape, t.stride()) if isinstance(t, torch.Tensor) else t
            for k, t in inputs.items()
        }

    for name, spec in all_ops().items():
        case = next(c for c in spec.cases("accuracy") if c.dtype == "bfloat16")
        inputs = spec.make_inputs(case, torch.device("cpu"))
        reference = spec.reference(inputs, case.torch_dtype)
        for kernel in spec.kernels:
            _, _, compiled = compile_inputs(name, kernel.name, case, torch.device("cpu"))
            wanted = spec.kernel_inputs(kernel.name, inputs, reference)
            assert described(compiled) == described(wanted), (name, kernel.name)


def test_restart_searches_the_selected_studies_again(db_url):
    (first,) = tune(db_url, trials=4)
    before = trials_of(db_url, first.name)
    (again,) = tune(db_url, trials=4, restart=True)
    after = trials_of(db_url, again.name)
    assert again.name == first.name
    assert again.verdict is not None
    assert len(after) == len(before)  # started over, not added to
    assert min(t.datetime_start for t in after) >= max(t.datetime_complete for t in before)
    with open_database(db_url).sessions() as session:
        assert session.scalar(select(func.count()).select_from(StudyRecord)) == 1
        assert session.scalar(select(func.count()).select_from(Claim)) == len(
            session.scalars(select(Claim).where(Claim.study_id == again.id)).all()
        )


def test_a_study_holds_exactly_the_measured_configs(db_url):
    """No pseudo-trials: the sampler never proposes a config that is taken (issue 14), so the
    attention forward with --trials 8 holds eight trials beside its recorded rejections."""
    (record,) = tune(
        db_url, op="jagged_dense_flash_attention", case="b4_n16_d32_t20_fp32", trials=8,
        kernels=["fwd"],
    )  # fmt: skip
    assert record.strategy == "local" and record.feasible_size > 8
    trials = trials_of(db_url, record.name)
    assert not [t for t in trials if t.state == TrialState.PRUNED]
    rejected = [t for t in trials if t.user_attrs.get("category") == "infeasible"]
    measured = [t for t in trials if t not in rejected]
    assert len(measured) == 8 and all(t.state == TrialState.COMPLETE for t in measured)
    assert len(rejected) == len(trials) - 8 > 0
    keys = [config_key(t.user_attrs["config"]) for t in trials]
    assert len(set(keys)) == len(keys)
    sources = [t.user_attrs["source"] for t in sorted(measured, key=lambda t: t.number)]
    assert sources[0] == "default"
    assert set(sources[1:]) <= {"warm", "local", "pattern", "global", "polish"}
    with open_database(db_url).sessions() as session:
        claims = list(session.scalars(select(Claim)))
    assert sorted(c.slot for c in claims if c.slot is not None) == list(range(8))
    assert {c.trial_number for c in claims} == {t.number for t in trials}


def test_sampler_option_and_warm_starts_from_a_sibling_study(db_url):
    """`--sampler random` takes the default, then only random steps, and the budget's last
    trial polishes (a quarter of 6); a study starts from the winner of its case on another soc
    (nearer than the first study, another dtype) right after its default."""
    (first,) = tune(db_url, case="b4_n16_d40_fp32", trials=6, sampler="random")
    sources = [
        t.user_attrs["source"]
        for t in sorted(trials_of(db_url, first.name), key=lambda t: t.number)
        if t.state == TrialState.COMPLETE
    ]
    assert first.strategy == "random" and sources == ["default"] + ["global"] * 4 + ["polish"]
    winner = {"BLOCK_ROW": 4, "BLOCK_COL": 64, "num_warps": 1}  # feasible, not the default
    with open_database(db_url).sessions() as session:
        session.add(
            StudyRecord(
                name="elsewhere", op=COPY_OP, kernel="fwd", case_name="b4_n16_d40_bf16",
                case={"shape": {"B": 4, "max_seq_len": 16, "D": 40}, "dtype": "bfloat16"},
                soc="H200", source_hash="0" * 64, budget=1, default_config={}, feasible_size=1,
                strategy="local", verdict=_settled(winner), verdict_trials=1,
            )
        )  # fmt: skip
        session.commit()
    (second,) = tune(db_url, case="b4_n16_d40_bf16", trials=4)
    measured = sorted(
        (t for t in trials_of(db_url, second.name) if t.state == TrialState.COMPLETE),
        key=lambda t: t.number,
    )
    assert [t.user_attrs["source"] for t in measured[:2]] == ["default", "warm"]
    assert measured[1].user_attrs["config"] == {**winner, "PROGRAMS": 0}  # the classic grid
    with pytest.raises(UserError, match="unknown --sampler 'annealing'"):
        tune(db_url, trials=4, sampler="annealing")
