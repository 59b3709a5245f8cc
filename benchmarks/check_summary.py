"""Summarise `autotune check --json` outputs (benchmarks/check_repeatability.sh): per file, the
(case, part) rows, regressions, the largest change of the frozen/reference ratio and of the frozen
port's own median, and every row whose ratio moved more than 3%.

    python benchmarks/check_summary.py docs/runs/2026-11-30_issue13_H200x2_check_quiet.json ...
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="+", type=Path)
    args = parser.parse_args()
    for path in args.files:
        rows = json.loads(path.read_text(encoding="utf-8"))
        ratio = max(abs(r["change"]) for r in rows)
        own = max(abs(r["absolute_change"]) for r in rows)
        regressed = sum(r["regressed"] for r in rows)
        contended = sum(r.get("outcome") == "contended" for r in rows)
        confirmed = sum(r["rounds"] == 2 for r in rows)
        print(
            f"{path.name}: {len(rows)} (case, part) of {len({r['op'] for r in rows})} ops; "
            f"{regressed} regressed ({confirmed} re-measured), {contended} contended; within 3%: "
            f"{sum(abs(r['change']) <= 0.03 for r in rows)}; largest ratio change {ratio:.2%}, "
            f"largest change of the frozen median {own:.2%}"
        )
        for r in rows:
            if abs(r["change"]) > 0.03 or r.get("outcome", "ok") != "ok":
                print(
                    f"  {r['op']} {r['case']} {r['part']}: ratio {r['change']:+.1%}, own "
                    f"{r['absolute_change']:+.1%}, now {r['median_ms']:.4f} ms, reference "
                    f"{r['reference']} {r['reference_ms']:.4f} ms, "
                    f"{r.get('outcome', 'regressed' if r['regressed'] else 'ok')} "
                    f"(p {r['p_value']:.2g}, {r['rounds']} round(s))"
                    + (f"; {r['contention']}" if r.get("contention") else "")
                )


if __name__ == "__main__":
    main()
