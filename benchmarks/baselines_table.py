"""The baselines of an `autotune export` file as one table: per (op, case, part, source) the
median, p20-p80 and n of the stored samples, with the soc, the commit and the time measured.

    python benchmarks/baselines_table.py baselines.json [--soc H200]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd


def table(path: str, soc: str | None) -> pd.DataFrame:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["baselines"]
    frame = pd.DataFrame(
        {
            "op": r["op"],
            "case": r["case_name"],
            "part": r["part"],
            "source": r["source"],
            "median_ms": r["median_ms"],
            "p20_ms": r["p20_ms"],
            "p80_ms": r["p80_ms"],
            "n": r["n"],
            "soc": r["soc"],
            "commit": (r.get("environment") or {}).get("project_commit", "")[:12],
            "measured_at": r["measured_at"][:19],
        }
        for r in rows
        if soc is None or r["soc"] == soc
    )
    return frame.sort_values(["op", "case", "part", "source"], kind="stable")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="an `autotune export` JSON file")
    parser.add_argument("--soc", help="only this soc's rows")
    args = parser.parse_args()
    frame = table(args.file, args.soc)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
