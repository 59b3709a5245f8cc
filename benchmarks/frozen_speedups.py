"""Frozen over upstream-default speedups, per op and overall, from the committed performance json.

    python benchmarks/frozen_speedups.py --soc H200 [--op OP ...]

The table of `autotune report` (autotuner.report.performance.verdict_speedups) in this script's own
layout. Each (kernel, case) entry `autotune freeze` wrote carries its verdict's speedup: the
frozen config against upstream's default config, re-timed interleaved on the device when it was
tuned. Entries without one (nothing frozen, or frozen on the interpreter) are left out. Needs no
device.
"""

from __future__ import annotations

import argparse

from autotuner.report.performance import speedup_summary, verdict_speedups


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--op", action="append", help="Only this op (repeatable); default all.")
    args = parser.parse_args()
    summary = speedup_summary(verdict_speedups(args.soc, args.op))
    print("| op | (kernel, case) | geomean | worst | best |\n|---|---|---|---|---|")
    if summary.empty:
        raise SystemExit(f"no frozen speedups on {args.soc}")
    for row in summary.itertuples(index=False):
        print(
            f"| {row.op} | {row.entries} | {row.geomean:.3f}x | {row.worst:.3f}x | {row.best:.2f}x |"
        )


if __name__ == "__main__":
    main()
