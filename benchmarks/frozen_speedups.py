"""Frozen over upstream-default speedups, per op and overall, from the committed performance json.

    python benchmarks/frozen_speedups.py --soc H200 [--op OP ...]

Each (kernel, case) entry `autotune freeze` wrote carries its verdict's speedup: the frozen config
against upstream's default config, re-timed interleaved on the device when it was tuned. Entries
without one (nothing frozen, or frozen on the interpreter) are left out. Needs no device.
"""

from __future__ import annotations

import argparse
import statistics

from autotuner.paths import performance_json
from autotuner.performance_json import frozen_sections, read
from ops import all_ops


def speedups(op: str, soc: str) -> list[float]:
    """The verdict speedups of every (kernel, case) of `op` frozen on `soc`."""
    out = []
    for by_soc in frozen_sections(read(performance_json(op))).values():
        for entry in by_soc.get(soc, {}).get("kernels", {}).values():
            if entry.get("speedup_over_default"):
                out.append(entry["speedup_over_default"])
    return out


def summary(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {statistics.geometric_mean(values):.3f}x | "
        f"{min(values):.3f}x | {max(values):.2f}x |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--op", action="append", help="Only this op (repeatable); default all.")
    args = parser.parse_args()
    names = args.op or sorted(all_ops())
    print("| op | (kernel, case) | geomean | worst | best |\n|---|---|---|---|---|")
    every = []
    for name in names:
        values = speedups(name, args.soc)
        if values:
            every += values
            print(summary(name, values))
    if not every:
        raise SystemExit(f"no frozen speedups on {args.soc}")
    print(summary("all", every))


if __name__ == "__main__":
    main()
