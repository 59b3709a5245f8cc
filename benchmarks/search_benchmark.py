"""The search against the exhaustive optimum and against `triton.autotune`, per kernel and case.

For each (op:kernel, performance case), on a device, with a cold Triton cache for each phase:
1. `triton.autotune` over the same feasible config list (a fresh process): its wall time;
2. `autotune run` with a budget of the whole feasible space (exhaustive): the optimum;
3. `autotune run` with a budget of `--fraction` of the space: its result, trials and wall time;
4. the default, the optimum and the search's winner re-timed interleaved in one worker.
One JSON line per (kernel, case) goes to OUT/search_benchmark.jsonl as soon as it is done.

    python benchmarks/search_benchmark.py --soc H200 --out OUT \\
        --target jagged_dense_flash_attention:fwd --target jagged_to_padded_dense:fwd
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from autotuner import runner
from autotuner.backends import get_backend
from autotuner.environment import environment
from autotuner.search import Plan
from autotuner.space import config_key
from autotuner.workers import Worker
from ops import get_op


def case_kind(soc: str) -> str:
    """Performance cases on a device; the interpreter (`--smoke`) only runs its small cases."""
    return "accuracy" if get_backend(soc).is_interpreter else "performance"


def plan_for(op: str, kernel: str, case_name: str, soc: str) -> Plan:
    backend = get_backend(soc)
    spec = get_op(op)
    case = spec.case(case_name, case_kind(soc))
    return Plan.make(
        spec, spec.kernel(kernel), case, backend.soc, backend.launch_options, backend.limits, 10**9
    )


def autotune_phase(op: str, kernel: str, case_name: str, soc: str) -> dict[str, Any]:
    """`triton.autotune` over the plan's feasible configs, timed from the first call to its end."""
    import triton

    from ops.ports import load_port

    plan = plan_for(op, kernel, case_name, soc)
    backend = get_backend(soc)
    spec, spec_kernel, case = plan.op, plan.kernel, plan.case
    inputs = spec.make_inputs(case, backend.device)
    kernel_inputs = spec.kernel_inputs(kernel, inputs, spec.reference(inputs))
    port = load_port(op)
    jit = getattr(port, spec_kernel.port_kernel)
    tuned = {t.name for t in plan.space.tunables}
    configs = [
        triton.Config(
            {k: v for k, v in c.items() if k.startswith("BLOCK_")},
            num_warps=c.get("num_warps", 4),
            num_stages=c.get("num_stages", 3),
        )
        for c in plan.feasible
    ]
    tuner = triton.autotune(configs=configs, key=[])(jit)

    class Autotuned:  # the launcher's `kernel[grid](...)` goes through triton.autotune instead
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                for name in tuned:
                    kwargs.pop(name, None)
                return tuner[lambda meta: spec_kernel.grid(meta, case)](*args, **kwargs)

            return launch

    setattr(port, spec_kernel.port_kernel, Autotuned())
    backend.synchronize()
    start = time.perf_counter()
    spec.launch(kernel, kernel_inputs, plan.default)
    backend.synchronize()
    wall = time.perf_counter() - start
    best = tuner.best_config
    picked = {**best.kwargs, "num_warps": best.num_warps}
    if "num_stages" in tuned:
        picked["num_stages"] = best.num_stages
    return {"wall_s": wall, "configs": len(configs), "picked": picked}


def tuning_phase(
    op: str, kernel: str, case_name: str, soc: str, budget: int, db: Path
) -> dict[str, Any]:
    start = time.perf_counter()
    (record,) = runner.run(
        op,
        soc,
        kernels=[kernel],
        cases=[case_name],
        trials=budget,
        db_url=f"sqlite:///{db}",
        seed=0,
        timeout_s=300,
    )
    wall = time.perf_counter() - start
    import optuna
    from optuna.trial import TrialState

    trials = optuna.load_study(study_name=record.name, storage=f"sqlite:///{db}").get_trials(
        deepcopy=False
    )
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [
        t
        for t in trials
        if t.state == TrialState.FAIL and t.user_attrs.get("category") != "infeasible"
    ]
    best = min(complete, key=lambda t: t.value)
    return {
        "wall_s": wall,
        "measured": len(complete) + len(failed),
        "failed": len(failed),
        "best": best.user_attrs["config"],
        "best_ms": best.value,
        "verdict": record.verdict,
        "compile_s_total": sum(t.user_attrs.get("compile_s", 0.0) for t in complete + failed),
    }


def retime(
    op: str,
    kernel: str,
    case_name: str,
    soc: str,
    configs: dict[str, dict],
    rounds: int = 7,
    reps: int = 30,
) -> dict[str, float]:
    """Medians (ms) of the named configs, timed interleaved in one worker."""
    spec = get_op(op)
    worker = Worker(get_backend(soc).soc)
    try:
        worker.prepare(op, kernel, spec.case(case_name, case_kind(soc)), 900)
        unique = {config_key(c): c for c in configs.values()}
        samples: dict[str, list[float]] = {key: [] for key in unique}
        for _ in range(rounds):
            for key, config in unique.items():
                samples[key] += worker.call(("samples", config, reps), 300)
    finally:
        worker.close()
    return {name: statistics.median(samples[config_key(c)]) for name, c in configs.items()}


def cold_cache(out: Path, tag: str) -> None:
    path = out / f"triton-cache-{tag}"
    shutil.rmtree(path, ignore_errors=True)
    os.environ["TRITON_CACHE_DIR"] = str(path)


def run_autotune_phase(op: str, kernel: str, case_name: str, soc: str) -> dict[str, Any]:
    """The triton.autotune phase in a fresh process, so it compiles into the cold cache alone."""
    command = [sys.executable, __file__, "--phase-autotune", op, kernel, case_name, "--soc", soc]
    completed = subprocess.run(command, capture_output=True, text=True, env=os.environ, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"triton.autotune phase failed: {completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def benchmark(
    op: str, kernel: str, case_name: str, soc: str, fraction: float, out: Path
) -> dict[str, Any]:
    plan = plan_for(op, kernel, case_name, soc)
    size = len(plan.feasible)
    tag = f"{op}-{kernel}-{case_name}"
    cold_cache(out, f"{tag}-triton")
    if get_backend(soc).is_interpreter:  # triton.autotune needs a device driver
        autotuned = {
            "wall_s": math.nan,
            "configs": size,
            "picked": plan.default,
            "skipped": "interpreter",
        }
    else:
        autotuned = run_autotune_phase(op, kernel, case_name, soc)
    cold_cache(out, f"{tag}-exhaustive")
    exhaustive = tuning_phase(op, kernel, case_name, soc, size, out / f"{tag}-exhaustive.db")
    cold_cache(out, f"{tag}-search")
    budget = max(1, math.floor(fraction * size))
    search = tuning_phase(op, kernel, case_name, soc, budget, out / f"{tag}-search.db")
    winner = search["verdict"]["winner"]
    times = retime(
        op,
        kernel,
        case_name,
        soc,
        {
            "default": plan.default,
            "optimum": exhaustive["best"],
            "search": winner,
            "triton_autotune": autotuned["picked"],
        },
    )
    return {
        "op": op, "kernel": kernel, "case": case_name, "space": size, "default": plan.default,
        "triton_autotune": autotuned, "exhaustive": exhaustive, "search": search, "retimed_ms": times,
        "search_fraction_of_optimum": times["optimum"] / times["search"],
        "search_speedup_over_default": times["default"] / times["search"],
        "optimum_speedup_over_default": times["default"] / times["optimum"],
        "evaluated_fraction": search["measured"] / size,
        "wall_ratio_search_vs_triton_autotune": search["wall_s"] / autotuned["wall_s"],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--target", action="append", default=[], help="op:kernel")
    parser.add_argument("--case", action="append", help="only these performance cases")
    parser.add_argument("--fraction", type=float, default=0.25)
    parser.add_argument(
        "--deadline-s", type=float, default=float("inf"), help="start nothing new after this"
    )
    parser.add_argument("--phase-autotune", nargs=3, metavar=("OP", "KERNEL", "CASE"))
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="allow the interpreter: checks the script, times mean nothing",
    )
    args = parser.parse_args()
    if args.phase_autotune:
        print(json.dumps(autotune_phase(*args.phase_autotune, args.soc)))
        return
    backend = get_backend(args.soc)
    if backend.is_interpreter and not args.smoke:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    args.out.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    with (args.out / "search_benchmark.jsonl").open("a") as sink:
        header = {
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "environment": environment(backend),
            "command": " ".join(sys.argv),
        }
        sink.write(json.dumps({"header": header}) + "\n")
        if args.smoke:
            sink.write(
                json.dumps(
                    {
                        "smoke": "interpreter run: checks the script only, the times are not performance"
                    }
                )
                + "\n"
            )
        for target in args.target:
            op, kernel = target.split(":")
            for case in get_op(op).cases(case_kind(args.soc)):
                if args.case and case.name not in args.case:
                    continue
                if time.monotonic() - began > args.deadline_s:
                    print(f"deadline: skipped {target} {case.name}", flush=True)
                    continue
                row = benchmark(op, kernel, case.name, args.soc, args.fraction, args.out)
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                print(
                    f"{op}:{kernel} {case.name}: space {row['space']}, search {row['search']['measured']} trials "
                    f"({row['evaluated_fraction']:.0%}), {row['search_fraction_of_optimum']:.1%} of optimum, "
                    f"{row['search_speedup_over_default']:.2f}x default (optimum {row['optimum_speedup_over_default']:.2f}x), "
                    f"wall {row['search']['wall_s']:.0f}s vs triton.autotune {row['triton_autotune']['wall_s']:.0f}s "
                    f"({row['wall_ratio_search_vs_triton_autotune']:.2f})",
                    flush=True,
                )


if __name__ == "__main__":
    main()
