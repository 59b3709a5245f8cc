"""Load figures of the service: dashboard latency over a large database, and write throughput.

    python benchmarks/service_load.py seed --db URL --cases 1000 --trials-per-case 100
    python benchmarks/service_load.py latency --db URL [--requests 200]
    python benchmarks/service_load.py writers --db URL --writers 8 --seconds 30

`seed` fills a database with real Optuna studies (one per case, bulk-inserted trials in Optuna's
own tables), study records, frozen versions, baselines and check verdicts, as a campaign of that
size leaves them. `latency` starts `autotune serve` on it and reports p50/p95 of the overview and
regressions pages and endpoints. `writers` runs N processes that each log trials as `autotune
run` does (a claim, an Optuna trial with its attributes, its value) while the latency of the
overview is sampled, and reports trials per second.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta

import httpx
import optuna
from optuna.storages._rdb import models as optuna_models
from sqlalchemy import insert, select

from autotuner.search.verdict import Outcome, Verdict
from storage import (
    Baseline,
    CheckVerdict,
    Claim,
    FrozenVersion,
    StudyRecord,
    open_database,
    optuna_storage,
)

SOCS = ("H200", "950PR")
PAGES = ("/", "/regressions", "/api/cases", "/api/regressions")
#: Sampled while writers log trials: the overview, and the studies list that counts their trials.
WRITE_TIME_PAGES = ("/", "/api/cases", "/api/studies?limit=100")


def _verdict(times: list[float]) -> Verdict:
    """A settled verdict on trial times whose trial n ran the config BLOCK 16 << (n % 5)."""
    best = times.index(min(times))
    return Verdict(
        outcome=Outcome.BEATS_DEFAULT, method="seeded", complete_trials=len(times), retimed=(),
        default_config={"BLOCK": 16, "num_warps": 4},
        winner={"BLOCK": 16 << (best % 5), "num_warps": 4}, winner_trial=best,
        winner_median_ms=times[best], default_median_ms=times[0], speedup=times[0] / times[best],
        p_value=None, beats_default=True,
    )  # fmt: skip


def seed(url: str, cases: int, trials_per_case: int, ops: int = 10) -> None:
    """`cases` (op, case, soc) studies with `trials_per_case` completed trials each."""
    db = open_database(url)
    storage = optuna_storage(db)
    now = datetime.now(UTC)
    rng = random.Random(0)
    per_op = cases // ops
    for o in range(ops):
        op = f"load_op_{o}"
        for soc in SOCS:
            entries = {}
            for c in range(per_op // len(SOCS)):
                case = f"b{64 << (c % 6)}_n{128 << (c % 5)}_d{32 << (c % 3)}_c{c}_bf16"
                name = f"{op}/fwd/{case}/{soc}/{'0' * 12}"
                study_id = storage.create_new_study([optuna.study.StudyDirection.MINIMIZE], name)
                with db.engine.begin() as connection:
                    trial_rows = [
                        {
                            "number": n,
                            "study_id": study_id,
                            "state": "COMPLETE",
                            "datetime_start": now,
                            "datetime_complete": now,
                        }
                        for n in range(trials_per_case)
                    ]
                    connection.execute(insert(optuna_models.TrialModel.__table__), trial_rows)
                    ids = connection.scalars(
                        select(optuna_models.TrialModel.trial_id).where(
                            optuna_models.TrialModel.study_id == study_id
                        )
                    ).all()
                    times = [rng.uniform(0.05, 1.0) for _ in ids]
                    connection.execute(
                        insert(optuna_models.TrialValueModel.__table__),
                        [
                            {"trial_id": i, "objective": 0, "value": t, "value_type": "FINITE"}
                            for i, t in zip(ids, times, strict=True)
                        ],
                    )
                    connection.execute(
                        insert(optuna_models.TrialUserAttributeModel.__table__),
                        [
                            {
                                "trial_id": i,
                                "key": "config",
                                "value_json": json.dumps({"BLOCK": 16 << (n % 5), "num_warps": 4}),
                            }
                            for n, i in enumerate(ids)
                        ],
                    )
                    best, default = min(times), times[0]
                    record = connection.execute(
                        insert(StudyRecord.__table__).returning(StudyRecord.__table__.c.id),
                        {
                            "name": name,
                            "op": op,
                            "kernel": "fwd",
                            "case_name": case,
                            "case": {"shape": {"B": 64}, "dtype": "bfloat16"},
                            "soc": soc,
                            "source_hash": "0" * 64,
                            "budget": trials_per_case,
                            "default_config": {"BLOCK": 16, "num_warps": 4},
                            "feasible_size": trials_per_case * 4,
                            "strategy": "tpe",
                            "created_at": now,
                            "verdict": _verdict(times).as_dict(),
                            "verdict_at": now,
                        },
                    ).scalar_one()
                    connection.execute(
                        insert(Claim.__table__),
                        [
                            {
                                "study_id": record,
                                "config_key": f"c{n}",
                                "slot": n,
                                "state": "complete",
                                "trial_number": n,
                                "worker": "seed",
                                "heartbeat_at": now,
                            }
                            for n in range(trials_per_case)
                        ],
                    )
                    entries[f"fwd {case}"] = {
                        "config": {"BLOCK": 32, "num_warps": 4},
                        "median_ms": best,
                        "default_ms": default,
                        "speedup_over_default": default / best,
                        "gpu_baseline_ms": best * rng.uniform(0.7, 1.4),
                    }
                    for source, ms in (("upstream", default * 1.1), ("port_frozen", best)):
                        samples = [ms * rng.uniform(0.98, 1.02) for _ in range(50)]
                        baseline_id = connection.execute(
                            insert(Baseline.__table__).returning(Baseline.__table__.c.id),
                            {
                                "op": op,
                                "soc": soc,
                                "case_name": case,
                                "part": "fwd",
                                "source": source,
                                "label": "M1" if source == "port_frozen" else None,
                                "configs": {},
                                "median_ms": ms,
                                "p20_ms": ms * 0.99,
                                "p80_ms": ms * 1.01,
                                "n": 50,
                                "samples": samples,
                                "interpreter": False,
                                "environment": {"soc": soc},
                                "measured_at": now - timedelta(days=1),
                            },
                        ).scalar_one()
                    change = rng.uniform(-0.05, 0.15)
                    connection.execute(
                        insert(CheckVerdict.__table__),
                        {
                            "op": op,
                            "soc": soc,
                            "case_name": case,
                            "part": "fwd",
                            "label": "M1",
                            "baseline_id": baseline_id,
                            "median_ms": best * (1 + change),
                            "p20_ms": best,
                            "p80_ms": best,
                            "n": 50,
                            "change": change,
                            "p_value": 0.001 if change > 0.05 else 0.5,
                            "threshold": 0.05,
                            "regressed": change > 0.05,
                            "gpu_ratio": 1.0,
                            "environment": {"soc": soc},
                            "checked_at": now,
                        },
                    )
            with db.engine.begin() as connection:
                for label, shift in (("M1", 1.0), ("M2", 0.9)):
                    connection.execute(
                        insert(FrozenVersion.__table__),
                        {
                            "op": op,
                            "soc": soc,
                            "label": label,
                            "created_at": now,
                            "content_hash": f"{label}{o}{soc}",
                            "entries": {
                                k: {**e, "median_ms": e["median_ms"] * shift}
                                for k, e in entries.items()
                            },
                        },
                    )
    studies = optuna.get_all_study_summaries(storage)
    total = sum(s.n_trials for s in studies)
    print(f"seeded {len(studies)} studies, {total} trials, {len(studies)} (op, case, soc) cases")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(url: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "autotuner", "serve", "--db", url, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(base + "/api/ops", timeout=1.0)
            return server, base
        except httpx.HTTPError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("the server did not start")


def latencies(base: str, path: str, requests: int) -> list[float]:
    out = []
    with httpx.Client(base_url=base, timeout=30.0) as client:
        client.get(path).raise_for_status()  # warm
        for _ in range(requests):
            start = time.perf_counter()
            client.get(path).raise_for_status()
            out.append((time.perf_counter() - start) * 1e3)
    return out


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"p50 {statistics.median(ordered):.1f} ms, p95 {p95:.1f} ms (n={len(ordered)})"


def latency(url: str, requests: int) -> None:
    server, base = start_server(url)
    try:
        for path in PAGES:
            print(f"{path:20} {summary(latencies(base, path, requests))}", flush=True)
    finally:
        server.terminate()


def writer(url: str, index: int, seconds: float, counter) -> None:
    """Log trials as `autotune run` does, without measuring anything."""
    db = open_database(url)
    storage = optuna_storage(db)
    name = f"load_writer/fwd/w{index}/{os.getpid()}"
    study = optuna.create_study(study_name=name, storage=storage, direction="minimize")
    with db.sessions() as session:
        record = StudyRecord(
            name=name,
            op="load_writer",
            kernel="fwd",
            case_name=f"w{index}",
            case={},
            soc="H200",
            source_hash="0" * 64,
            budget=10**6,
            default_config={},
            feasible_size=10**6,
            strategy="tpe",
        )
        session.add(record)
        session.commit()
        record_id = record.id
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        with db.sessions() as session:
            claim = Claim(
                study_id=record_id, config_key=f"c{n}", slot=n, state="running", worker=name
            )
            session.add(claim)
            session.commit()
            trial = study.ask()
            trial.set_user_attr("config", {"BLOCK": n})
            trial.set_user_attr(
                "timing", {"median_ms": 0.1, "p20_ms": 0.09, "p80_ms": 0.11, "n": 100}
            )
            study.tell(trial, 0.1)
            claim.state, claim.trial_number = "complete", trial.number
            session.commit()
        n += 1
    with counter.get_lock():
        counter.value += n


def writers(url: str, count: int, seconds: float) -> None:
    open_database(url)  # schema first, once
    counter = mp.get_context("spawn").Value("i", 0)
    processes = [
        mp.get_context("spawn").Process(target=writer, args=(url, i, seconds, counter))
        for i in range(count)
    ]
    server, base = start_server(url)
    try:
        start = time.perf_counter()
        for process in processes:
            process.start()
        time.sleep(3)  # let every writer open its study
        samples: dict[str, list[float]] = {path: [] for path in WRITE_TIME_PAGES}
        while any(p.is_alive() for p in processes):
            for path in WRITE_TIME_PAGES:
                samples[path] += latencies(base, path, 3)
        for process in processes:
            process.join()
        elapsed = time.perf_counter() - start
    finally:
        server.terminate()
    # Each writer logs for `seconds` after its start-up (imports, its study): the windows overlap.
    print(
        f"{count} writers: {counter.value} trials in {seconds:.0f} s each = "
        f"{counter.value / seconds:.0f} trials/s ({elapsed:.0f} s with start-up)"
    )
    for path, values in samples.items():
        print(f"{path:24} while they wrote: {summary(values)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("seed", "latency", "writers"))
    parser.add_argument("--db", required=True)
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--trials-per-case", type=int, default=100)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.mode == "seed":
        seed(args.db, args.cases, args.trials_per_case)
    elif args.mode == "latency":
        latency(args.db, args.requests)
    else:
        writers(args.db, args.writers, args.seconds)


if __name__ == "__main__":
    main()
