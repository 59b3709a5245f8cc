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

from sqlalchemy import select

from core.paths import performance_json
from ops import all_ops
from storage import open_database
from storage.models import Baseline


def measured_now(urls: list[str], soc: str) -> dict[tuple[str, str, str], float]:
    """(op, case, part) -> the newest upstream median of `soc` in the databases."""
    newest: dict[tuple[str, str, str], tuple] = {}
    for url in urls:
        with open_database(url).sessions() as session:
            rows = session.scalars(
                select(Baseline).where(Baseline.soc == soc, Baseline.source == "upstream")
            )
            for row in rows:
                key = (row.op, row.case_name, row.part)
                if key not in newest or row.measured_at > newest[key][0]:
                    newest[key] = (row.measured_at, row.median_ms)
    return {key: median for key, (_, median) in newest.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soc", required=True)
    parser.add_argument("--tolerance", type=float, default=0.10)
    parser.add_argument("urls", nargs="+")
    args = parser.parse_args()
    now = measured_now(args.urls, args.soc)
    for op in all_ops():
        cases = json.loads(performance_json(op).read_text())["cases"]
        for case in cases:
            kernels = case.get("frozen", {}).get(args.soc, {}).get("kernels", {})
            for kernel, numbers in kernels.items():
                stored, measured = (
                    numbers.get("gpu_baseline_ms"),
                    now.get((op, case["name"], kernel)),
                )
                if stored and measured and abs(stored / measured - 1) > args.tolerance:
                    print(f"{op} {case['name']} {kernel}: performance json {stored:.4f} ms, "
                          f"upstream now {measured:.4f} ms ({stored / measured:.1f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
