"""GPU baselines in the performance jsons that differ from upstream measured now.

    python benchmarks/stale_gpu_baselines.py --soc H200 sqlite:///lane0.db sqlite:///lane1.db

For each op's `<op>_performance.json`, compares each frozen (case, kernel)'s `gpu_baseline_ms`
with the newest upstream baseline of the same (op, case, part) on the soc in the given
databases (an `autotune baseline` of the same code), and prints those more than `--tolerance`
apart: numbers a later `autotune freeze` of the op rewrites.
"""

from __future__ import annotations

import argparse
import json

from autotuner.baseline.baseline import gpu_baseline
from core.paths import performance_json
from ops import all_ops
from storage import Database, open_database


def measured_now(
    databases: list[Database], op: str, case: str, part: str, soc: str
) -> float | None:
    """The newest GPU baseline of `soc` of one (op, case, part) over the databases, as freeze
    takes it (`gpu_baseline`)."""
    rows = []
    for database in databases:
        with database.sessions() as session:
            rows.append(gpu_baseline(session, op, case, part, soc))
    found = [row for row in rows if row is not None]
    return max(found, key=lambda row: row.measured_at).median_ms if found else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soc", required=True)
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    databases = [open_database(url) for url in args.urls]
    for op in all_ops():
        cases = json.loads(performance_json(op).read_text())["cases"]
        for case in cases:
            kernels = case.get("frozen", {}).get(args.soc, {}).get("kernels", {})
            for kernel, numbers in kernels.items():
                stored = numbers.get("gpu_baseline_ms")
                measured = measured_now(databases, op, case["name"], kernel, args.soc)
                if stored and measured and abs(stored / measured - 1) > args.tolerance:
                    print(f"{op} {case['name']} {kernel}: performance json {stored:.4f} ms, "
                          f"upstream now {measured:.4f} ms ({stored / measured:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
