"""A small database for the service's tests: frozen versions, baselines, checks, verify's
verdicts, device ceilings, two studies.

Rows are made through storage's models and real Optuna studies, so nothing needs a GPU or the
interpreter. The constants are what the pages and the API must show.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState, create_trial
from sqlalchemy import select

from autotuner.search.verdict import Outcome, Verdict
from storage import (
    AccuracyResult,
    Baseline,
    CheckVerdict,
    DeviceCeiling,
    FrozenVersion,
    StudyRecord,
    open_database,
    optuna_storage,
)

JTPD = "jagged_to_padded_dense"
FLASH = "jagged_dense_flash_attention"
LEGACY = "legacy_op"  # only in the database, no module of `ops` defines it
CASE_A, CASE_B = "b2048_n256_d64_fp16", "b1024_n1024_d128_fp32"
CASE_FLASH = "b1024_n256_d128_t128_bf16"
CASE_CPU = "b1_n8_d16_fp32"
T0 = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)

#: (op, soc, case, part) -> the overview's frozen ms, GPU baseline ms, ratio, speedup; None: "-".
EXPECTED = {
    (JTPD, "H200", CASE_A, "fwd"): (0.02903, 0.0305, 0.02903 / 0.0305, 1.072),
    (JTPD, "H200", CASE_B, "fwd"): (0.1904, 0.2100, 0.1904 / 0.2100, 1.124),
    (FLASH, "910B", CASE_FLASH, "fwd"): (0.5, 0.0881, 0.5 / 0.0881, 1.25),
    (FLASH, "910B", CASE_FLASH, "bwd"): (1.1, 0.5, 1.1 / 0.5, 1.5 / 1.1),
    (JTPD, "cpu", CASE_CPU, "fwd"): (12.5, None, None, None),
    (LEGACY, "A100", "x1", "fwd"): (1.5, 1.0, 1.5, 1.333),
}
#: The newest check of (JTPD, H200, CASE_A, fwd) regressed; that of CASE_B did not.
REGRESSED = (JTPD, "H200", CASE_A, "fwd")
#: A case with verdicts only (no frozen config, baseline or check): its overview row's part.
CASE_VERIFIED = "b1_n8_d16_fp32"
#: (op, soc, case) -> the overview's accuracy cell text (the newest verdicts of its outputs).
ACCURACY = {
    (JTPD, "cpu", CASE_CPU): "pass",  # an older verdict failed
    (JTPD, "H200", CASE_A): "FAIL 1 of 1",
    (JTPD, "H200", CASE_VERIFIED): "pass",
    (FLASH, "910B", CASE_FLASH): "FAIL 1 of 2",
}
ACCURACY_FAILURES = {(JTPD, "H200", CASE_A, "dense"), (FLASH, "910B", CASE_FLASH, "lse")}
STUDY_MAIN = f"{JTPD}/fwd/{CASE_A}/H200/abcdef012345"
STUDY_CPU = f"{JTPD}/fwd/{CASE_CPU}/cpu/abcdef012345"
MAIN_COMPLETE, MAIN_FAILED = 12, 3


@dataclass
class Seeded:
    url: str
    study_ids: dict[str, int]  # study name -> StudyRecord id


def _entry(config: dict, median: float, default: float, speedup: float, gpu=None) -> dict:
    return {
        "config": config,
        "median_ms": median,
        "p20_ms": median * 0.98,
        "p80_ms": median * 1.02,
        "n": 50,
        "default_ms": default,
        "speedup_over_default": speedup,
        "beats_default": speedup > 1,
        "gpu_baseline_ms": gpu,
        "gpu_baseline_soc": "H200" if gpu else None,
        "study": None,
        "trial": 0,
    }


def _baseline(op, soc, case, part, source, median, at, interpreter=False) -> Baseline:
    return Baseline(
        op=op,
        soc=soc,
        case_name=case,
        part=part,
        source=source,
        label="M1" if source == "port_frozen" else None,
        configs={},
        median_ms=median,
        p20_ms=median * 0.98,
        p80_ms=median * 1.02,
        n=50,
        samples=[median] * 5,
        interpreter=interpreter,
        environment={},
        measured_at=at,
    )


def _check(baseline: Baseline, median: float, change: float, regressed: bool, at) -> CheckVerdict:
    return CheckVerdict(
        op=baseline.op,
        soc=baseline.soc,
        case_name=baseline.case_name,
        part=baseline.part,
        label="M1",
        baseline_id=baseline.id,
        median_ms=median,
        p20_ms=median,
        p80_ms=median,
        n=50,
        change=change,
        p_value=0.001 if regressed else 0.4,
        threshold=0.05,
        regressed=regressed,
        outcome="regressed" if regressed else "ok",
        gpu_ratio=median / 0.0305,
        environment={},
        checked_at=at,
    )


def _rows() -> list:
    cfg = {"BLOCK_N": 64, "num_warps": 4}
    later = T0 + timedelta(days=1)
    return [
        FrozenVersion(
            op=JTPD,
            soc="H200",
            label="M0",
            created_at=T0,
            content_hash="0" * 64,
            entries={f"fwd {CASE_A}": _entry(cfg, 0.0320, 0.03112, 0.97, 0.0400)},
        ),
        FrozenVersion(
            op=JTPD,
            soc="H200",
            label="M1",
            created_at=later,
            content_hash="1" * 64,
            entries={
                f"fwd {CASE_A}": _entry(cfg, 0.02903, 0.03112, 1.072, 0.0305),
                f"fwd {CASE_B}": _entry(cfg, 0.1904, 0.2140, 1.124, 0.2100),
            },
        ),
        FrozenVersion(
            op=FLASH,
            soc="910B",
            label="M1",
            created_at=later,
            content_hash="2" * 64,
            entries={
                f"fwd {CASE_FLASH}": _entry(cfg, 0.5, 0.625, 1.25, 0.0881),
                f"bwd_preprocess {CASE_FLASH}": _entry(cfg, 0.1, 0.1, 1.0),
                f"bwd_dv_db_dq {CASE_FLASH}": _entry(cfg, 0.6, 0.8, 1.333),
                f"bwd_dk {CASE_FLASH}": _entry(cfg, 0.4, 0.6, 1.5),
            },
        ),
        FrozenVersion(
            op=JTPD,
            soc="cpu",
            label="M1",
            created_at=later,
            content_hash="3" * 64,
            entries={f"fwd {CASE_CPU}": _entry(cfg, 12.5, 16.25, 1.3)},
        ),
        FrozenVersion(
            op=LEGACY,
            soc="A100",
            label="v1",
            created_at=later,
            content_hash="4" * 64,
            entries={"fwd x1": _entry(cfg, 1.5, 2.0, 1.333, 1.0)},
        ),
        _baseline(JTPD, "H200", CASE_A, "fwd", "upstream", 0.0400, T0),
        _baseline(JTPD, "H200", CASE_A, "fwd", "upstream", 0.0305, later),
        _baseline(JTPD, "H200", CASE_A, "fwd", "port_default", 0.03110, later),
        _baseline(JTPD, "H200", CASE_B, "fwd", "upstream", 0.2100, later),
        _baseline(FLASH, "H200", CASE_FLASH, "fwd", "upstream", 0.0881, later),
        _baseline(FLASH, "H200", CASE_FLASH, "bwd", "upstream", 0.5, later),
        _baseline(JTPD, "cpu", CASE_CPU, "fwd", "upstream", 10.0, later, interpreter=True),
        _baseline(JTPD, "H200", CASE_A, "fwd", "port_frozen", 0.02905, later),
        _baseline(JTPD, "H200", CASE_B, "fwd", "port_frozen", 0.1901, later),
    ]


def _checks(session) -> list[CheckVerdict]:
    """Two checks of CASE_A's frozen baseline (the newer regressed), one of CASE_B's."""
    frozen = session.scalars(
        select(Baseline).where(Baseline.source == "port_frozen").order_by(Baseline.case_name)
    ).all()
    by_case = {b.case_name: b for b in frozen}
    at = T0 + timedelta(days=1)
    return [
        _check(by_case[CASE_A], 0.02910, 0.002, False, at + timedelta(hours=1)),
        _check(by_case[CASE_A], 0.03140, 0.081, True, at + timedelta(hours=2)),
        _check(by_case[CASE_B], 0.1895, -0.004, False, at + timedelta(hours=2)),
    ]


def _verdict(op, soc, case, output, passed: bool, at, reason: str = "") -> AccuracyResult:
    errors = {"mare": 0.002, "mere": 0.0004, "rmse": 0.001, "small_errors": 0, "small_total": 8,
              "finite": True}  # fmt: skip
    return AccuracyResult(
        op=op,
        soc=soc,
        case_name=case,
        case={"shape": {}, "dtype": case.rsplit("_", 1)[-1], "kind": "accuracy"},
        output=output,
        configs={"fwd": {"BLOCK_N": 64, "num_warps": 4}},
        metrics={
            "port": errors,
            "second": errors,
            "ratios": {"mare": 1.0, "mere": 1.0, "rmse": 1.0},
        },
        reference="upstream",
        level="L0",
        passed=passed,
        mode="dual",
        reason=reason,
        toolchain={"torch": "2.13.0"},
        verified_at=at,
    )


def _verdicts() -> list:
    later = T0 + timedelta(days=2)
    return [
        _verdict(JTPD, "cpu", CASE_CPU, "dense", False, T0, "MARE ratio 12 > 10"),
        _verdict(JTPD, "cpu", CASE_CPU, "dense", True, later),
        _verdict(JTPD, "H200", CASE_A, "dense", True, T0),
        _verdict(JTPD, "H200", CASE_A, "dense", False, later, "MERE ratio 2.5 > 2"),
        _verdict(JTPD, "H200", CASE_VERIFIED, "dense", True, later),
        _verdict(FLASH, "910B", CASE_FLASH, "out", True, later),
        _verdict(FLASH, "910B", CASE_FLASH, "lse", False, later, "non-finite output"),
        DeviceCeiling(soc="H200", bandwidth=4.27e12, environment={}, measured_at=T0,
                      flops={"float32": 388e12, "float16": 675e12, "bfloat16": 795e12}),
    ]  # fmt: skip


def _study_record(name: str, soc: str, case: str, verdict: dict | None) -> StudyRecord:
    return StudyRecord(
        name=name,
        op=JTPD,
        kernel="fwd",
        case_name=case,
        case={"shape": {}, "dtype": case.rsplit("_", 1)[-1]},
        soc=soc,
        source_hash="abcdef012345" * 5 + "abcd",
        budget=16,
        feasible_size=16,
        default_config={"BLOCK_N": 32, "num_warps": 4},
        strategy="exhaustive",
        created_at=T0,
        verdict=verdict,
        verdict_at=T0 + timedelta(days=1) if verdict else None,
    )


def _trials(storage, name: str, complete: int, failed: int) -> None:
    """Complete trials over a 4 x 4 space (time falls with BLOCK_N), then failed ones."""
    study = optuna.create_study(study_name=name, storage=storage, direction="minimize")
    axes = {"BLOCK_N": IntDistribution(4, 7), "num_warps": IntDistribution(0, 3)}
    for i in range(complete + failed):
        params = {"BLOCK_N": 4 + i % 4, "num_warps": (i // 4) % 4}
        config = {"BLOCK_N": 2 ** params["BLOCK_N"], "num_warps": 2 ** params["num_warps"]}
        attrs = {"config": config, "source": "exhaustive"}
        if i < complete:
            value = 0.05 - 0.005 * params["BLOCK_N"] + 0.001 * params["num_warps"]
            trial = create_trial(params=params, distributions=axes, value=value, user_attrs=attrs)
        else:
            attrs |= {"category": "compile", "message": f"out of resources ({i})"}
            trial = create_trial(
                params=params, distributions=axes, state=TrialState.FAIL, user_attrs=attrs
            )
        study.add_trial(trial)


def seed(url: str) -> Seeded:
    """Fill the empty database at `url`."""
    db = open_database(url)
    storage = optuna_storage(db)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    _trials(storage, STUDY_MAIN, MAIN_COMPLETE, MAIN_FAILED)
    _trials(storage, STUDY_CPU, 1, 0)
    verdict = Verdict(
        outcome=Outcome.BEATS_DEFAULT, method="seeded", complete_trials=MAIN_COMPLETE, retimed=(),
        default_config={"BLOCK_N": 32, "num_warps": 4}, winner={"BLOCK_N": 128, "num_warps": 1},
        winner_trial=3, winner_median_ms=0.0305, default_median_ms=0.0327, speedup=1.072,
        p_value=0.001, beats_default=True,
    ).as_dict()  # fmt: skip
    records = [
        _study_record(STUDY_MAIN, "H200", CASE_A, verdict),
        _study_record(STUDY_CPU, "cpu", CASE_CPU, None),
    ]
    with db.sessions() as session:
        session.add_all([*_rows(), *_verdicts(), *records])
        session.flush()
        session.add_all(_checks(session))
        session.commit()
        ids = {r.name: r.id for r in records}
    db.engine.dispose()
    return Seeded(url, ids)
