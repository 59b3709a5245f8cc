"""Roofline fractions of the port at upstream's default configs and at its frozen configs.

    python benchmarks/roofline.py --soc H200 --db URL [--op OP ...]    # on the device

Measures the device's ceilings and stores them (autotuner.report.roofline), then prints `autotune
report`'s rows (autotuner.report.performance) in this script's layout: per op, performance case
and part with both a "port_default" and a "port_frozen" baseline (`autotune baseline`), the bytes
and flops the part must move and compute, both times, and their fractions of the ceilings; the
larger of the two fractions is the one that bounds. Then the geometric mean of frozen over default.
"""

from __future__ import annotations

import argparse
import math
import statistics

from autotuner.backends import get_backend
from autotuner.report.performance import report_frame
from autotuner.report.roofline import record_ceilings
from storage import open_database


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--op", action="append")
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    db = open_database(args.db)
    peak = record_ceilings(db, backend)
    print(f"Ceilings on {backend.describe()}: {peak.describe()}\n")
    print("| op | case | part | MB moved | GFLOP | default ms | frozen ms | speedup | "
          "default: % BW / % FLOP | frozen: % BW / % FLOP |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    frame = report_frame(db, backend.soc, args.op, peak).dropna(subset=["default_ms", "frozen_ms"])
    for r in frame.itertuples(index=False):
        print(f"| {r.op} | {r.case} | {r.part} | {r.moved_bytes / 1e6:.1f} | {r.flops / 1e9:.2f} | "
              f"{r.default_ms:.4f} | {r.frozen_ms:.4f} | {r.speedup:.2f}x | "
              f"{100 * r.default_bandwidth_share:.0f} / {100 * r.default_compute_share:.0f} | "
              f"{100 * r.bandwidth_share:.0f} / {100 * r.compute_share:.0f} |")  # fmt: skip
    speedups = list(frame.speedup)
    print(f"\nGeometric mean of frozen over default: {statistics.geometric_mean(speedups) if speedups else math.nan:.3f}x over "
          f"{len(speedups)} (op, case, part) baselines, worst {min(speedups, default=math.nan):.3f}x.")  # fmt: skip


if __name__ == "__main__":
    main()
