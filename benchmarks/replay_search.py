"""Replay the search offline on recorded exhaustive tables: the real sampler, a table as oracle.

For each case row of `search_benchmark.py`'s jsonl output (`exhaustive.table`: every feasible
config that ran, with its median ms), this runs the sampler `autotune run` uses (seeded, so the
replay is deterministic) in an in-memory Optuna study whose objective looks the config up in the
table; a feasible config missing from the table failed when it ran: it spends a trial and yields
no time. The case comes from the row's shape, dtype and lengths (rows of older runs name a case
of the op instead), so any row replays, also one whose case the op does not list. The plan
(space, feasible configs, budget) is `Plan.make`'s, the budget a share of the feasible configs.
Warm starts are the winners of the sibling rows of the same kernel in the given files, never the
case's own (leave one out). A tunable added since a table was recorded (the program count) is
held at its default, so the replay searches the space the run measured.

The budget's last trials go to the polish first (`SearchSampler.polish`: the open neighbours of
the best config so far), as in `autotune run`; `--no-polish` leaves it out (the same budget).
`--seeds N` replays every case with the seeds 0 to N - 1.

Prints per case (and seed) optimum_ms / found_ms (100%: the search found the optimum) and ends
with one line per kernel, `<op>:<kernel>: median X%, worst Y%`, and one over all of them.

    python benchmarks/replay_search.py --fraction 0.12 --seeds 5 \
        docs/runs/*search_benchmark*.jsonl docs/runs/*dispatch_regret*.jsonl
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("TRITON_INTERPRET", "1")  # no device needed to import the ops

import optuna  # noqa: E402
from recorded_tables import case_of, read_rows, siblings_of  # noqa: E402

from autotuner.backends import SocProfile  # noqa: E402
from autotuner.search import warm_starts  # noqa: E402
from autotuner.search.sampler import (  # noqa: E402
    STRATEGIES,
    SearchSampler,
    polish_trials,
)
from autotuner.search.space import SearchSpace, config_key  # noqa: E402
from autotuner.search.study import Plan  # noqa: E402
from core.limits import DeviceLimits  # noqa: E402
from ops import get_op  # noqa: E402
from ops.spec import Config  # noqa: E402

LAUNCH_OPTIONS = frozenset({"num_warps", "num_stages"})


def recorded(plan: Plan, table: list[tuple[Config, float]], fraction: float) -> Plan:
    """The plan narrowed to the axes the table's run had: a tunable its configs do not name (a
    program count added since) held at its default, the budget that share of what is left."""
    named = {name for config, _ in table for name in config}
    held = {t.name: t.default for t in plan.space.tunables if t.name not in named}
    if not held:
        return plan
    space = SearchSpace(
        plan.kernel,
        tuple(
            dataclasses.replace(t, values=(held[t.name],)) if t.name in held else t
            for t in plan.space.tunables
        ),
    )
    feasible = [c for c in plan.feasible if space.contains(c)]
    budget = max(1, math.floor(fraction * len(feasible)))
    sampler = "local" if plan.strategy == "exhaustive" else plan.strategy
    strategy = "exhaustive" if len(feasible) <= budget else sampler
    return dataclasses.replace(
        plan,
        space=space,
        feasible=feasible,
        budget=budget,
        strategy=strategy,
        polish=polish_trials(space, strategy, budget),
    )


def replay(
    row: dict[str, Any],
    rows: list[dict[str, Any]],
    fraction: float,
    limits: DeviceLimits,
    strategy: str,
    seed: int,
    warm: bool,
    polish: bool = True,
) -> tuple[Plan, list[float], int]:
    """The plan of the row's case, the times of the configs the search measures, in order
    (inf: the config failed), and how many of them the polish proposed."""
    spec = get_op(row["op"])
    case = case_of(row)
    plan = Plan.make(
        spec,
        spec.kernel(row["kernel"]),
        case,
        "replay",
        SocProfile(LAUNCH_OPTIONS, limits, {}),
        fraction,
    )
    plan = recorded(plan, row["exhaustive"]["table"], fraction)
    starts = (
        warm_starts.choose(
            plan.space,
            plan.feasible,
            plan.default,
            plan.budget,
            (case.name, case.shape, case.dtype, "replay"),
            siblings_of(row["op"], row["kernel"], case, rows, "replay"),
        )
        if warm
        else []
    )
    sampler = SearchSampler(
        plan.space,
        plan.feasible,
        plan.default,
        strategy="exhaustive" if plan.strategy == "exhaustive" else strategy,
        warm_starts=starts,
        seed=seed,
    )
    study = optuna.create_study(direction="minimize", sampler=sampler)
    times = {config_key(plan.space.complete(c)): ms for c, ms in row["exhaustive"]["table"]}
    ran: list[float] = []
    polished = 0
    while len(ran) < min(plan.budget, len(plan.feasible)):
        choice = sampler.polish(study) if polish and len(ran) >= plan.budget - plan.polish else None
        sampler.pin(choice)  # None: the sampler proposes
        polished += choice is not None
        trial = study.ask(sampler.distributions)
        ms = times.get(config_key(plan.space.from_params(trial.params)))
        study.tell(trial, ms, state=None if ms is not None else optuna.trial.TrialState.FAIL)
        ran.append(ms if ms is not None else math.inf)
    return plan, ran, polished


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", nargs="+", type=Path, help="search_benchmark.py output")
    parser.add_argument("--fraction", type=float, default=0.25, help="budget: share of feasible")
    parser.add_argument(
        "--shared-memory-bytes", type=int, default=232448, help="per block (H200: 232448)"
    )
    parser.add_argument("--sampler", choices=STRATEGIES, default="local")
    parser.add_argument("--seeds", type=int, default=1, help="replay with seeds 0 to N - 1")
    parser.add_argument("--no-warm-starts", action="store_true", help="no sibling winners")
    parser.add_argument("--no-polish", action="store_true", help="no polish after the budget")
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    limits = DeviceLimits(shared_memory_bytes=args.shared_memory_bytes)
    rows = read_rows(args.jsonl)
    per_kernel: dict[str, list[float]] = {}
    polished: list[int] = []
    for row in rows:
        for seed in range(args.seeds):
            plan, ran, extra = replay(
                row, rows, args.fraction, limits, args.sampler, seed,
                not args.no_warm_starts, not args.no_polish,
            )  # fmt: skip
            if len(plan.feasible) != row["space"] and seed == 0:
                print(
                    f"  note: {len(plan.feasible)} feasible configs here, {row['space']} in the run"
                )
            found, optimum = min(ran), min(ms for _, ms in row["exhaustive"]["table"])
            name = f"{row['op']}:{row['kernel']}"
            per_kernel.setdefault(name, []).append(optimum / found)
            polished.append(extra)
            print(
                f"{name} {row['case']}: {optimum / found:.1%} of the optimum "
                f"({optimum:.4f} / {found:.4f} ms) in {len(ran)} trials ({extra} polish), "
                f"best at trial {ran.index(found) + 1}, seed {seed}"
            )
    for name, fractions in per_kernel.items():
        print(
            f"{name}: median {statistics.median(fractions):.1%}, worst {min(fractions):.1%}, "
            f"{len(fractions)} cases x seeds"
        )
    every = [f for fractions in per_kernel.values() for f in fractions]
    print(
        f"all: median {statistics.median(every):.1%}, worst {min(every):.1%}, {len(every)} "
        f"cases x seeds ({len(rows)} tables, {args.seeds} seeds); the polish proposed "
        f"{sum(polished)} trials, {statistics.mean(polished):.2f} a replay, at most {max(polished)} "
        "(of the budget, not beyond it)"
    )


if __name__ == "__main__":
    main()
