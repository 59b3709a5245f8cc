"""The baselines of an `autotune export` file as one table: per (op, case, part, source) the
median, p20-p80 and n of the stored samples, with the soc, the commit and the time measured.
With --ratios, per (op, case, part) the frozen port's median over upstream's, measured
interleaved in one baseline, with a 95% bootstrap interval of that ratio (2000 resamples of
each source's samples) and the one-sided Mann-Whitney p that the port is slower.

    python benchmarks/baselines_table.py baselines.json [--soc H200] [--ratios]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu


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


def ratios(path: str, soc: str | None) -> pd.DataFrame:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["baselines"]
    samples = {
        (r["soc"], r["op"], r["case_name"], r["part"], r["source"]): np.asarray(r["samples"])
        for r in rows
        if soc is None or r["soc"] == soc
    }
    rng = np.random.default_rng(0)
    out = []
    for (at, op, case, part, source), frozen in sorted(samples.items()):
        upstream = samples.get((at, op, case, part, "upstream"))
        if source != "port_frozen" or upstream is None:
            continue
        boot = [
            np.median(rng.choice(frozen, frozen.size)) / np.median(rng.choice(upstream, upstream.size))
            for _ in range(2000)
        ]  # fmt: skip
        low, high = np.percentile(boot, [2.5, 97.5])
        out.append({
            "soc": at, "op": op, "case": case, "part": part,
            "frozen/upstream": np.median(frozen) / np.median(upstream),
            "95% low": low, "95% high": high, "n frozen": frozen.size, "n upstream": upstream.size,
            "p slower": mannwhitneyu(frozen, upstream, alternative="greater").pvalue,
        })  # fmt: skip
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", help="an `autotune export` JSON file")
    parser.add_argument("--soc", help="only this soc's rows")
    parser.add_argument("--ratios", action="store_true", help="frozen / upstream per part")
    args = parser.parse_args()
    frame = (ratios if args.ratios else table)(args.file, args.soc)
    print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))


if __name__ == "__main__":
    main()
