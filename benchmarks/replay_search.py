"""Replay the search's deterministic proposal order offline, with a measured table as the oracle.

For each case row of `search_benchmark.py`'s jsonl output (`exhaustive.table`: every feasible
config that ran, with its median ms), this re-runs the order of `Study.proposals`: the default
first; then the unmeasured feasible neighbours of the best config so far (`SearchSpace.neighbors`
order); then its `SearchSpace.pattern_moves`; where neither has anything left, the unmeasured
feasible config nearest to the best (`SearchSpace.nearest`), a deterministic stand-in for the
TPE step. A feasible config missing from the table failed when it ran: it spends a trial and
yields no time. The budget is a share of the feasible configs, rounded as `Plan.make` does.

Prints per case optimum_ms / found_ms (1.0: the search found the optimum) and, per kernel, the
median over its cases. The order differs from a recorded run's, whose workers claim proposals
before earlier ones are timed and whose global steps are TPE's.

    python benchmarks/replay_search.py docs/runs/2026-11-30_M1_H200x2_search_benchmark_*.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
from pathlib import Path
from typing import Any

os.environ.setdefault("TRITON_INTERPRET", "1")  # no device needed to import the ops

from autotuner.backends.base import DeviceLimits  # noqa: E402
from autotuner.space import SearchSpace, config_key, space_for  # noqa: E402
from ops import get_op  # noqa: E402
from ops.spec import Config  # noqa: E402

LAUNCH_OPTIONS = frozenset({"num_warps", "num_stages"})


def feasible_space(row: dict[str, Any], limits: DeviceLimits) -> tuple[SearchSpace, list[Config]]:
    """The searched space (boxed around the feasible configs) and its feasible configs, as in
    `Plan.make`."""
    spec = get_op(row["op"])
    kernel = spec.kernel(row["kernel"])
    case = spec.case(row["case"], "performance")
    space = space_for(kernel, LAUNCH_OPTIONS)
    default = space.restrict(row["default"])
    feasible = [
        c for c in space.configs() if c == default or kernel.violation(c, case, limits) is None
    ]
    return space.around(feasible), feasible


def replay(
    space: SearchSpace,
    feasible: list[Config],
    default: Config,
    times: dict[str, float],
    budget: int,
) -> list[Config]:
    """The configs the search measures, in order, with `times` (config key -> ms) as the oracle."""
    feasible_keys = {config_key(c) for c in feasible}
    order: list[Config] = []
    measured: dict[str, tuple[Config, float]] = {}
    config: Config | None = default
    while config is not None:
        order.append(config)
        if config_key(config) in times:  # else it failed when it ran
            measured[config_key(config)] = (config, times[config_key(config)])
        taken = {config_key(c) for c in order}
        if len(order) >= budget or feasible_keys <= taken:
            break
        best = min(measured.values(), key=lambda m: m[1])[0] if measured else default
        local = [
            c
            for c in [*space.neighbors(best), *space.pattern_moves(best, measured)]
            if config_key(c) in feasible_keys - taken
        ]
        config = (
            local[0]
            if local
            else space.nearest(best, [c for c in feasible if config_key(c) not in taken])
        )
    return order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", nargs="+", type=Path, help="search_benchmark.py output")
    parser.add_argument("--fraction", type=float, default=0.25, help="budget: share of feasible")
    parser.add_argument(
        "--shared-memory-bytes", type=int, default=232448, help="per block (H200: 232448)"
    )
    args = parser.parse_args()
    limits = DeviceLimits(shared_memory_bytes=args.shared_memory_bytes)
    per_kernel: dict[str, list[float]] = {}
    for path in args.jsonl:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "op" not in row:
                continue
            space, feasible = feasible_space(row, limits)
            if len(feasible) != row["space"]:
                print(f"  note: {len(feasible)} feasible configs here, {row['space']} in the run")
            times = {config_key(c): ms for c, ms in row["exhaustive"]["table"]}
            budget = max(1, math.floor(args.fraction * len(feasible)))
            order = replay(space, feasible, space.restrict(row["default"]), times, budget)
            ran = [times.get(config_key(c), math.inf) for c in order]  # inf: it failed
            found, optimum = min(ran), min(times.values())
            name = f"{row['op']}:{row['kernel']}"
            per_kernel.setdefault(name, []).append(optimum / found)
            print(
                f"{name} {row['case']}: {optimum / found:.1%} of the optimum "
                f"({optimum:.4f} / {found:.4f} ms) in {len(order)} trials, "
                f"best at trial {ran.index(found) + 1}"
            )
    for name, fractions in per_kernel.items():
        print(f"{name}: median {statistics.median(fractions):.1%}, worst {min(fractions):.1%}")


if __name__ == "__main__":
    main()
