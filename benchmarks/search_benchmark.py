"""The search against the exhaustive optimum and against `triton.autotune`, per kernel.

For each op:kernel, over its performance cases, on a device:
1. `triton.autotune` over the same feasible config list (one tuner per setting of the launcher:
   its program counts and what it derives from a config, which a `triton.Config` cannot carry;
   the pick the fastest of their picks), one fresh process per case with its own cold cache,
   twice: compiling serially as it does by itself (timed from the first call), and
   like for like with `autotune run`, with as many compile workers (`--autotune-compile-workers`,
   default as many as `autotune run` starts), each compiling a share of the configs with
   triton.autotune's own warmup first (timed from their start); `--skip-serial` keeps only the
   second; `--skip-autotune` skips the phase. `--autotune-parallel N` runs N cases at once
   (saves device time; keep 1 where the wall times are compared);
2. `autotune run` with every feasible config as budget (exhaustive): the optimum per case
   (this phase alone starts from the binaries triton.autotune compiled: only its optimum counts);
3. `autotune run --sampler S` with `--fraction` of each case's feasible configs: results, trials,
   wall time (into `--search-db`, when given, so that this run is also the campaign's `autotune
   run`), warm-started by `--warm-starts`: by default the exhaustive winners of the kernel's
   other cases (leave one out, as `replay_search.py` replays it); a run of one `--case` takes
   them from recorded tables instead (`--warm-starts recorded --recorded FILE...`);
4. per case, the default, the optimum, the search's winner and triton.autotune's picks re-timed
   interleaved in one worker.
Rows (one per kernel with the wall times and both ratios, as soon as the search phase ends;
then one per case, with its shape, dtype and lengths, so that `replay_search.py` replays any of
them) are appended to OUT/search_benchmark.jsonl as soon as they exist; `--report FILE` renders them as Markdown.

    python benchmarks/search_benchmark.py --soc H200 --out OUT --fraction 0.12 \\
        --target jagged_dense_flash_attention:bwd_dk --target jagged_to_padded_dense:fwd
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
import recorded_tables
from filelock import FileLock
from optuna.trial import TrialState

from autotuner.backends import SocProfile, get_backend, spec_here
from autotuner.measure.environment import run_header
from autotuner.search import runner, warm_starts
from autotuner.search.request import RunRequest
from autotuner.search.sampler import STRATEGIES
from autotuner.search.space import config_key
from autotuner.search.study import Plan
from autotuner.search.workers import Worker
from ops import get_op
from ops.spec import Config


def case_kind(soc: str) -> str:
    """Performance cases on a device; the interpreter (`--smoke`) only runs its small cases."""
    return "accuracy" if get_backend(soc).is_interpreter else "performance"


def plan_for(op: str, kernel: str, case_name: str, soc: str) -> Plan:
    backend = get_backend(soc)
    spec = get_op(op)
    case = spec.case(case_name, case_kind(soc))
    return Plan.make(spec, spec.kernel(kernel), case, backend.soc, SocProfile.of(backend), 1.0)


def launcher_tunables(plan: Plan, jit: Any) -> tuple[str, ...]:
    """The tunables the port's launcher reads itself, not the kernel: neither a launch option nor
    a parameter of the `@triton.jit` function (a norm's NUM_PROGRAMS, a program count PROGRAMS).
    They set the grid and what the launcher derives from it (the partial rows a norm's bwd_dx
    leaves, a group norm's atomic lock rows), which a `triton.Config` cannot carry."""
    return tuple(
        t.name for t in plan.space.tunables if not t.launch_option and t.name not in jit.arg_names
    )


def interpreter_bench(kernel_call: Callable[[], object], quantiles: tuple[float, ...]) -> list:
    """triton.autotune's benchmarker on the interpreter, which has no device driver: one call,
    its wall time (it checks the launches, and is no performance number)."""
    start = time.perf_counter()
    kernel_call()
    return [1e3 * (time.perf_counter() - start)] * len(quantiles)


def launch_arguments(args: tuple, kwargs: dict[str, Any]) -> tuple:
    """What a launcher passes its kernel besides the tuned values: tensors by shape and dtype,
    other arguments by value. Configs whose launches differ here (a softmax's column-block
    count, a norm's partial rows) cannot share one `triton.autotune` call."""

    def described(value: Any) -> Any:
        return (tuple(value.shape), str(value.dtype)) if hasattr(value, "shape") else value

    return tuple(map(described, args)) + tuple(
        (name, described(value)) for name, value in sorted(kwargs.items())
    )


@dataclass
class Autotuned:
    """`triton.autotune` over the configs that share one setting of the launcher (its own
    tunables, `launcher_tunables`, and the arguments it derives, `launch_arguments`), launched
    by the port's launcher at one of them: its `kernel[grid](...)` goes through the tuner, with
    the tuner's constexprs and launch options and the kernel spec's grid of each config."""

    fixed: Config  # the launcher's tunables at this setting
    tuner: Any  # triton.runtime.autotuner.Autotuner
    config: Config  # the config the launcher is called at: one of the setting's
    kernel_call: Callable[[], object] | None = None  # the kernel's last launch, as it was made

    def timings(self) -> dict[Any, list[float]]:
        """triton.config -> triton.autotune's [median, p20, p80] ms. A setting of one config
        triton.autotune runs untimed: its last kernel launch is timed by the same benchmarker."""
        timed = getattr(self.tuner, "configs_timings", None)
        if timed:
            return timed
        assert self.kernel_call is not None, "launched first"
        config = self.tuner.configs[0]
        return {config: self.tuner.do_bench(self.kernel_call, quantiles=(0.5, 0.2, 0.8))}

    def picked(self, plan: Plan) -> Config:
        best = self.tuner.best_config
        names = {t.name for t in plan.space.tunables}
        options = {"num_warps": best.num_warps, "num_stages": best.num_stages}
        return {**best.kwargs, **{k: v for k, v in options.items() if k in names}, **self.fixed}


def autotuned_launches(
    op: str,
    kernel: str,
    case_name: str,
    soc: str,
    shard: tuple[int, int] | None = None,
    configs: list[Config] | None = None,
) -> tuple[Plan, list[Autotuned], Callable[[Autotuned], object]]:
    """The plan, `triton.autotune` over its feasible configs (or `configs`), and a call of the
    launcher through one of its tuners; inputs and the reference they need are built first.
    One tuner per setting of the launcher: the launcher's own tunables (`launcher_tunables`)
    and the arguments it derives from the config (`launch_arguments`, recorded by a call of
    the launcher at each config that launches nothing), as a user of triton.autotune would
    write one kernel per such setting. With a `shard` (i, n): every n-th config from the i-th,
    and the calls only compile them (triton.autotune's warmup)."""
    import triton

    from ops.ports import load_port

    plan = plan_for(op, kernel, case_name, soc)
    backend = get_backend(soc)
    spec, spec_kernel, case = plan.op, plan.kernel, plan.case
    inputs = spec.make_inputs(case, backend.device)
    # Only shapes and dtypes matter here: a reference in the case dtype, not the float64 golden.
    kernel_inputs = spec.kernel_inputs(kernel, inputs, spec.reference(inputs, case.torch_dtype))
    port = load_port(op)
    jit = getattr(port, spec_kernel.port_kernel)
    outside = launcher_tunables(plan, jit)
    tuned = {t.name for t in plan.space.tunables} - set(outside)
    chosen = (plan.feasible if configs is None else configs)[
        slice(shard[0], None, shard[1]) if shard else slice(None)
    ]
    do_bench = interpreter_bench if backend.is_interpreter else None

    class Kernel:  # the launcher's `kernel[grid](...)`: through the tuner of its setting
        current: Autotuned | None = None  # None: only record the arguments of the launch
        arguments: tuple = ()

        def __getitem__(self, _grid):  # the kernel spec's grid, from the config
            autotuned = self.current

            def launch(*args, **kwargs):
                for name in tuned:
                    kwargs.pop(name, None)
                if autotuned is None:
                    self.arguments = launch_arguments(args, kwargs)
                    return None
                grid = lambda meta: spec_kernel.launch_grid(  # noqa: E731
                    {**meta, **autotuned.fixed}, case, backend.limits
                )
                if shard:
                    return autotuned.tuner.warmup(*args, grid=grid, **kwargs)
                autotuned.kernel_call = lambda: jit[grid](
                    *args, **kwargs, **autotuned.tuner.best_config.all_kwargs()
                )
                return autotuned.tuner[grid](*args, **kwargs)

            return launch

    through = Kernel()

    @contextmanager
    def tuned_launcher() -> Iterator[None]:
        """The port's kernel replaced by `through` for one call of its launcher, and put back:
        the port module is shared (`load_port`), and a later caller in this process (a test)
        must not launch through a tuner whose inputs are gone."""
        setattr(port, spec_kernel.port_kernel, through)
        try:
            yield
        finally:
            setattr(port, spec_kernel.port_kernel, jit)

    settings: dict[tuple, list[Config]] = {}
    for config in chosen:
        through.arguments = ()
        with tuned_launcher():
            spec.launch(kernel, kernel_inputs, config)  # recorded, not run
        fixed = config_key({k: config[k] for k in outside})
        settings.setdefault((fixed, through.arguments), []).append(config)
    launches = [
        Autotuned(
            {k: group[0][k] for k in outside},
            triton.autotune(
                configs=[
                    triton.Config(
                        {k: v for k, v in c.items() if k in tuned and k in jit.arg_names},
                        num_warps=c.get("num_warps", 4),
                        num_stages=c.get("num_stages", 3),
                    )
                    for c in group
                ],
                key=[],
                do_bench=do_bench,
            )(jit),
            group[0],
        )
        for group in settings.values()
    ]

    def launch(autotuned: Autotuned) -> object:
        through.current = autotuned
        with tuned_launcher():
            return spec.launch(kernel, kernel_inputs, autotuned.config)

    return plan, launches, launch


def autotune_phase(
    op: str,
    kernel: str,
    case_name: str,
    soc: str,
    workers: int,
    configs: list[Config] | None = None,
) -> dict[str, Any]:
    """`triton.autotune` over the plan's feasible configs (or `configs`), one tuner per setting
    of the launcher's own tunables, the pick the fastest by triton.autotune's own timings. With
    `workers` compile workers, as many processes compile a share of the configs each into the
    (cold) cache with triton.autotune's own warmup, as `autotune run`'s compile workers do for
    the search, while this one builds its inputs; the wall time runs from their start. Without,
    from the first call: everything compiled serially."""
    start = time.perf_counter()
    shards = [
        subprocess.Popen(
            [sys.executable, __file__, "--phase-warmup", op, kernel, case_name, "--soc", soc]
            + ["--shard", f"{i}/{workers}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(workers)
    ]
    plan, launches, launch = autotuned_launches(op, kernel, case_name, soc, configs=configs)
    for process in shards:
        _, stderr = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"triton.autotune warmup of {case_name} failed: {stderr[-2000:]}")
    backend = get_backend(soc)
    backend.synchronize()
    if not workers:
        start = time.perf_counter()
    timings = []
    for autotuned in launches:
        launch(autotuned)
        backend.synchronize()
        timings.append((autotuned.timings()[autotuned.tuner.best_config][0], autotuned))
    wall = time.perf_counter() - start
    best = min(timings, key=lambda timed: timed[0])[1]
    return {
        "wall_s": wall,
        "configs": len(plan.feasible if configs is None else configs),
        "launcher_settings": len(launches),
        "compile_workers": workers,
        "picked": best.picked(plan),
    }


def warmup_phase(op: str, kernel: str, case_name: str, soc: str, shard: tuple[int, int]) -> None:
    """Compile one share of the configs with `triton.autotune`'s warmup (nothing runs); the
    inputs are built one process at a time (large cases take much device memory)."""
    with FileLock(os.environ["TRITON_CACHE_DIR"].rstrip("/") + ".lock"):
        _, launches, launch = autotuned_launches(op, kernel, case_name, soc, shard)
    for autotuned in launches:
        launch(autotuned)


def run_autotune_phases(
    op: str, kernel: str, cases: list[str], soc: str, out: Path, parallel: int, workers: int
) -> dict[str, dict[str, Any]]:
    """The triton.autotune phase of each case in a fresh process with its own cold cache."""
    results: dict[str, dict[str, Any]] = {}
    for start in range(0, len(cases), parallel):
        running = {}
        for case in cases[start : start + parallel]:
            command = [sys.executable, __file__, "--phase-autotune", op, kernel, case, "--soc", soc]
            command += ["--autotune-compile-workers", str(workers)]
            tag = f"{op}-{kernel}-{case}-triton" + (f"-{workers}-workers" if workers else "")
            env = {**os.environ, "TRITON_CACHE_DIR": cold_cache(out, tag)}
            running[case] = subprocess.Popen(
                command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
            )
        for case, process in running.items():
            stdout, stderr = process.communicate()
            if process.returncode != 0:
                raise RuntimeError(f"triton.autotune phase of {case} failed: {stderr[-2000:]}")
            results[case] = {
                **json.loads(stdout.strip().splitlines()[-1]),
                "alongside": len(running),
            }
    return results


def tuning_phase(
    op: str,
    kernel: str,
    cases: list[str],
    soc: str,
    trials: float,
    db_url: str,
    sampler: str = "local",
    siblings: runner.Siblings | None = None,
) -> dict[str, Any]:
    """One `autotune run` over all cases; per case: its trials, best config and verdict."""
    start = time.perf_counter()
    records = runner.run(
        RunRequest(
            op,
            soc,
            kernels=[kernel],
            cases=cases,
            trials=trials,
            db_url=db_url,
            timeout_s=300,
            sampler=sampler,
        ),
        siblings=siblings,
    )
    wall = time.perf_counter() - start
    per_case = {}
    for record in records:
        trials_ = optuna.load_study(study_name=record.name, storage=db_url).get_trials(
            deepcopy=False
        )
        complete = [t for t in trials_ if t.state == TrialState.COMPLETE]
        failed = [
            t
            for t in trials_
            if t.state == TrialState.FAIL and t.user_attrs.get("category") != "infeasible"
        ]
        best = min(complete, key=lambda t: t.value)
        per_case[record.case_name] = {
            "measured": len(complete) + len(failed),
            "budget": record.budget,
            "failed": dict(
                sorted(
                    (c, sum(t.user_attrs.get("category") == c for t in failed))
                    for c in {t.user_attrs.get("category") for t in failed}
                )
            ),
            "best": best.user_attrs["config"],
            "best_ms": best.value,
            "verdict": record.verdict,
            "table": sorted(
                ([t.user_attrs["config"], t.value] for t in complete), key=lambda row: row[1]
            ),
            "order": [t.user_attrs["config"] for t in sorted(complete, key=lambda t: t.number)],
            "sources": [t.user_attrs["source"] for t in sorted(complete, key=lambda t: t.number)],
        }
    return {"wall_s": wall, "cases": per_case}


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
    worker = Worker(spec_here(soc))
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


def cold_cache(out: Path, tag: str) -> str:
    """An emptied Triton cache folder for one phase."""
    path = out / f"triton-cache-{tag}"
    shutil.rmtree(path, ignore_errors=True)
    return str(path)


def exhaustive_siblings(
    op: str, kernel: str, soc: str, exhaustive: dict[str, Any]
) -> runner.Siblings:
    """Warm starts as the replay gives them: the exhaustive winners of the kernel's other cases
    in this run (leave one out)."""

    def siblings(plan: Plan) -> list[warm_starts.Sibling]:
        out = []
        for case, result in exhaustive["cases"].items():
            if case != plan.case.name and result["verdict"]:
                other = plan_for(op, kernel, case, soc).case
                winner = result["verdict"]["winner"]
                out.append(warm_starts.Sibling(case, other.shape, other.dtype, plan.soc, winner))
        return out

    return siblings


def benchmark_kernel(
    op: str,
    kernel: str,
    cases: list[str],
    soc: str,
    options: argparse.Namespace,
    sink,
) -> None:
    out, tag = options.out, f"{op}-{kernel}-{'-'.join(cases)}"
    workers = options.autotune_compile_workers
    interpreter = get_backend(soc).is_interpreter  # triton.autotune needs a device driver
    if interpreter or options.skip_autotune:
        autotuned = {
            case: {
                "wall_s": math.nan,
                "configs": len(plan_for(op, kernel, case, soc).feasible),
                "picked": plan_for(op, kernel, case, soc).default,
                "skipped": "interpreter" if interpreter else "--skip-autotune",
            }
            for case in cases
        }
        parallel = autotuned
    else:
        parallel = run_autotune_phases(
            op, kernel, cases, soc, out, options.autotune_parallel, workers
        )
        autotuned = (
            {
                case: {**result, "wall_s": math.nan, "skipped": "--skip-serial"}
                for case, result in parallel.items()
            }
            if options.skip_serial
            else run_autotune_phases(op, kernel, cases, soc, out, options.autotune_parallel, 0)
        )
    # The exhaustive run only supplies the optimum (its wall time is not compared): it starts
    # from the binaries triton.autotune compiled. The search run starts cold.
    os.environ["TRITON_CACHE_DIR"] = cold_cache(out, f"{tag}-exhaustive")
    for case in cases:
        compiled = out / f"triton-cache-{op}-{kernel}-{case}-triton-{workers}-workers"
        if compiled.exists():
            shutil.copytree(compiled, os.environ["TRITON_CACHE_DIR"], dirs_exist_ok=True)
    exhaustive = tuning_phase(
        op,
        kernel,
        cases,
        soc,
        1.0,
        f"sqlite:///{out / f'{tag}-exhaustive.db'}",
        siblings=lambda plan: [],
    )
    os.environ["TRITON_CACHE_DIR"] = cold_cache(out, f"{tag}-search")
    search_db = options.search_db or f"sqlite:///{out / f'{tag}-search.db'}"
    recorded = recorded_tables.read_rows(options.recorded)
    siblings = {
        "exhaustive": exhaustive_siblings(op, kernel, soc, exhaustive),
        "database": None,  # what `autotune run` reads: the search database and frozen_configs
        "recorded": lambda plan: recorded_tables.siblings_of(
            op, kernel, plan.case, recorded, plan.soc
        ),
        "none": lambda plan: [],
    }[options.warm_starts]
    search = tuning_phase(
        op, kernel, cases, soc, options.fraction, search_db, options.sampler, siblings
    )
    # The wall times are known now: the summary first, so a run stopped during the re-timing
    # below still says them.
    serial_wall = sum(a["wall_s"] for a in autotuned.values())  # nan with --skip-serial
    parallel_wall = sum(a["wall_s"] for a in parallel.values())
    summary = {
        "op": op,
        "kernel": kernel,
        "cases": cases,
        "compile_workers": workers,
        "wall_s": {
            "triton_autotune": serial_wall,
            "triton_autotune_parallel": parallel_wall,
            "exhaustive": exhaustive["wall_s"],
            "search": search["wall_s"],
        },
    }
    summary["wall_ratio_search_vs_triton_autotune"] = (
        search["wall_s"] / serial_wall if serial_wall else math.nan
    )
    summary["wall_ratio_search_vs_triton_autotune_parallel"] = (
        search["wall_s"] / parallel_wall if parallel_wall else math.nan
    )
    sink.write(json.dumps({"kernel_summary": summary}) + "\n")
    sink.flush()
    print(
        f"{op}:{kernel}: tuning wall {search['wall_s']:.0f} s (autotune run, {workers} compile workers) vs "
        f"{parallel_wall:.0f} s (triton.autotune, {workers} compile workers): "
        f"{summary['wall_ratio_search_vs_triton_autotune_parallel']:.2f}; vs {serial_wall:.0f} s "
        f"(triton.autotune, serial): {summary['wall_ratio_search_vs_triton_autotune']:.2f}",
        flush=True,
    )
    for case in cases:
        ex, se, at = exhaustive["cases"][case], search["cases"][case], autotuned[case]
        plan = plan_for(op, kernel, case, soc)
        times = retime(
            op,
            kernel,
            case,
            soc,
            {
                "default": plan.default,
                "optimum": ex["best"],
                "search": se["verdict"]["winner"],
                "triton_autotune": at["picked"],
                "triton_autotune_parallel": parallel[case]["picked"],
            },
        )
        row = {
            "op": op, "kernel": kernel, "case": case, "shape": plan.case.shape,
            "dtype": plan.case.dtype, "lengths": list(plan.case.lengths), "space": ex["measured"],
            "default": plan.default, "sampler": options.sampler, "warm_starts": options.warm_starts,
            "triton_autotune": at, "triton_autotune_parallel": parallel[case],
            "exhaustive": ex, "search": se, "retimed_ms": times,
            "search_fraction_of_optimum": times["optimum"] / times["search"],
            "search_speedup_over_default": times["default"] / times["search"],
            "optimum_speedup_over_default": times["default"] / times["optimum"],
            "evaluated_fraction": se["measured"] / ex["measured"],
        }  # fmt: skip
        sink.write(json.dumps(row) + "\n")
        sink.flush()
        print(f"{op}:{kernel} {case}: space {row['space']}, search {se['measured']} trials ({row['evaluated_fraction']:.0%}), "
              f"{row['search_fraction_of_optimum']:.1%} of optimum, {row['search_speedup_over_default']:.2f}x default "
              f"(optimum {row['optimum_speedup_over_default']:.2f}x)", flush=True)  # fmt: skip


def report(paths: list[Path]) -> str:
    """Markdown tables of search_benchmark.jsonl files; a kernel's wall times are summed over
    the invocations that covered its cases."""
    rows, kernels = [], {}
    for path in paths:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if "kernel_summary" in record:
                summary = record["kernel_summary"]
                total = kernels.setdefault(
                    f"{summary['op']}:{summary['kernel']}",
                    {"cases": [], "wall_s": dict.fromkeys(summary["wall_s"], 0.0)},
                )
                total["cases"] += summary["cases"]
                for phase, seconds in summary["wall_s"].items():
                    total["wall_s"][phase] += seconds
            elif "op" in record:
                rows.append(record)
    text = "| op:kernel | case | space | search trials | search / optimum | default ms | optimum ms | search ms | triton.autotune pick ms | verdict |\n|---|---|---|---|---|---|---|---|---|---|\n"
    for r in rows:
        t, verdict = r["retimed_ms"], r["search"]["verdict"]
        text += (f"| {r['op']}:{r['kernel']} | {r['case']} | {r['space']} | {r['search']['measured']} ({r['evaluated_fraction']:.0%}) | "
                 f"{r['search_fraction_of_optimum']:.1%} | {t['default']:.4f} | {t['optimum']:.4f} | {t['search']:.4f} | {t['triton_autotune']:.4f} | "
                 f"{'beats default' if verdict['beats_default'] else 'default kept'} |\n")  # fmt: skip
    fractions = [r["search_fraction_of_optimum"] for r in rows]
    evaluated = [r["evaluated_fraction"] for r in rows]
    if rows:
        text += f"\nMedian over cases: search at {statistics.median(fractions):.1%} of the optimum with {statistics.median(evaluated):.0%} of the space evaluated; worst case {min(fractions):.1%}; slower than the default in {sum(r['search_speedup_over_default'] < 1 for r in rows)} case(s) (re-timed medians).\n"
    text += "\n| op:kernel | cases | triton.autotune s | autotune run (search) s | ratio | triton.autotune, as many compile workers, s | ratio | exhaustive s |\n|---|---|---|---|---|---|---|---|\n"
    for name, k in kernels.items():
        w = k["wall_s"]
        serial, parallel = w["triton_autotune"], w.get("triton_autotune_parallel", math.nan)
        text += f"| {name} | {len(k['cases'])} | {serial:.0f} | {w['search']:.0f} | {w['search'] / serial if serial else math.nan:.2f} | {parallel:.0f} | {w['search'] / parallel if parallel else math.nan:.2f} | {w['exhaustive']:.0f} |\n"
    return text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--target", action="append", default=[], help="op:kernel")
    parser.add_argument("--case", action="append", help="only these performance cases")
    parser.add_argument("--fraction", type=float, default=0.25)
    parser.add_argument(
        "--autotune-parallel",
        type=int,
        default=1,
        help="triton.autotune processes (cases) at once; keep 1 for the like-for-like wall times",
    )
    parser.add_argument(
        "--autotune-compile-workers",
        type=int,
        help="compile workers triton.autotune gets in its second timing (default: as many as "
        "autotune run uses, AUTOTUNE_COMPILE_WORKERS or min(6, cores / 2))",
    )
    parser.add_argument("--sampler", choices=STRATEGIES, default="local", help="of the search")
    parser.add_argument(
        "--warm-starts",
        choices=("exhaustive", "recorded", "database", "none"),
        default="exhaustive",
        help="the search's warm starts: the exhaustive winners of the kernel's other cases in "
        "this run (leave one out, as replay_search.py), in the `--recorded` tables (leave one "
        "out: for a run of one `--case`), what autotune run reads (the search database and "
        "frozen_configs), or none",
    )
    parser.add_argument(
        "--recorded", type=Path, nargs="+", default=[], help="search_benchmark jsonl files"
    )
    parser.add_argument(
        "--skip-serial",
        action="store_true",
        help="skip triton.autotune's serial timing; the like-for-like one (compile workers) stays",
    )
    parser.add_argument(
        "--skip-autotune",
        action="store_true",
        help="skip the triton.autotune phase: the search against the exhaustive optimum only "
        "(its pick is then the default)",
    )
    parser.add_argument("--search-db", help="database URL of the search phase (the campaign's)")
    parser.add_argument("--phase-autotune", nargs=3, metavar=("OP", "KERNEL", "CASE"))
    parser.add_argument("--phase-warmup", nargs=3, metavar=("OP", "KERNEL", "CASE"))
    parser.add_argument("--shard", help="I/N: the configs the warmup phase compiles")
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="allow the interpreter: checks the script, times mean nothing",
    )
    parser.add_argument(
        "--report", type=Path, nargs="+", help="print Markdown tables of these jsonl and exit"
    )
    args = parser.parse_args()
    if (args.warm_starts == "recorded") != bool(args.recorded):
        parser.error("--warm-starts recorded and --recorded FILE... go together")
    if missing := [str(path) for path in args.recorded if not path.is_file()]:
        parser.error(f"--recorded: no such file: {', '.join(missing)}")
    if args.report:
        print(report(args.report))
        return
    if args.phase_warmup:
        index, count = (int(x) for x in args.shard.split("/"))
        warmup_phase(*args.phase_warmup, args.soc, (index, count))
        return
    backend = get_backend(args.soc)
    if args.autotune_compile_workers is None:
        args.autotune_compile_workers = runner.compile_workers(backend)
    if args.phase_autotune:
        print(
            json.dumps(
                autotune_phase(*args.phase_autotune, args.soc, args.autotune_compile_workers)
            )
        )
        return
    if backend.is_interpreter and not args.smoke:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "search_benchmark.jsonl").open("a") as sink:
        sink.write(json.dumps({"header": run_header(backend, args.smoke)}) + "\n")
        for target in args.target:
            op, kernel = target.split(":")
            available = [c.name for c in get_op(op).cases(case_kind(args.soc))]
            unknown = set(args.case or ()) - set(available)
            if unknown:
                raise SystemExit(f"unknown case(s) {sorted(unknown)}; valid: {available}")
            cases = [c for c in available if not args.case or c in args.case]
            benchmark_kernel(op, kernel, cases, args.soc, args, sink)


if __name__ == "__main__":
    main()
