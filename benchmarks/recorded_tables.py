"""Rows of `search_benchmark.py`'s jsonl output that carry an exhaustive table, and the sibling
winners they give a case (leave one out): what `replay_search.py` replays and what
`search_benchmark.py --warm-starts recorded` starts a search from. Rows of
`dispatch_regret.py`, whose exhaustive runs keep their table at the top level, are read in the
same form; a table such a run took over from an earlier one (`--optimum-from`) is read once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autotuner.search import warm_starts
from ops import get_op
from ops.jagged import skewed_lengths
from ops.spec import Case


def case_of(row: dict[str, Any]) -> Case:
    """The row's case: from its shape, dtype and lengths where it has them, else by name."""
    spec = get_op(row["op"])
    if "shape" in row:
        return spec.make_case(row["shape"], row["dtype"], tuple(row["lengths"]), "performance")
    return spec.case(row["case"], "performance")


def from_dispatch_regret(row: dict[str, Any]) -> dict[str, Any]:
    """A `dispatch_regret.py` row in `search_benchmark.py`'s form: its held-out shape with the
    lengths it was drawn with, its table and its optimum as the exhaustive run's winner."""
    shape = row["shape"]
    return {
        **row,
        "lengths": list(skewed_lengths(shape["B"], shape["max_seq_len"])),
        "exhaustive": {"table": row["table"], "verdict": {"winner": row["optimum"]}},
    }


def read_rows(paths: list[Path]) -> list[dict[str, Any]]:
    rows, seen = [], set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "op" in row and "table" in row:
                row = from_dispatch_regret(row)
                table = json.dumps([row["op"], row["kernel"], row["table"]])
                if table in seen:
                    continue
                seen.add(table)
            if "op" in row and "table" in row.get("exhaustive", {}):
                rows.append(row)
    return rows


def siblings_of(
    op: str, kernel: str, case: Case, rows: list[dict[str, Any]], soc: str
) -> list[warm_starts.Sibling]:
    """The exhaustive winners of the rows of the kernel's other cases (never `case`'s own),
    as siblings on `soc`."""
    out = []
    for other in rows:
        if (other["op"], other["kernel"]) != (op, kernel):
            continue
        other_case = case_of(other)
        if other_case.shape == case.shape and other_case.dtype == case.dtype:
            continue
        winner = other["exhaustive"]["verdict"]["winner"]
        out.append(
            warm_starts.Sibling(other_case.name, other_case.shape, other_case.dtype, soc, winner)
        )
    return out
