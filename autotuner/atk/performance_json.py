"""`npu_atk_test/<op>_performance.json`: the performance cases ATK consumes, and per case and soc
the frozen config with its numbers (written by `autotune freeze`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.errors import UserError
from ops.spec import OpSpec

SCHEMA_VERSION = 1


def read(path: Path) -> dict[str, Any]:
    """The document, or a UserError naming what is wrong with it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UserError(f"{path} is missing") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict) or not isinstance(data.get("cases"), list):
        raise UserError(f"{path} must be an object with a list of cases")
    return data


def render(
    spec: OpSpec,
    frozen: dict[str, dict[str, Any]] | None = None,
    extra: dict[str, dict[str, Any]] | None = None,
) -> str:
    """The document for the spec's performance cases; `frozen` maps case name -> soc -> entry.

    Frozen cases outside the performance list (e.g. the interpreter's cases, frozen on `cpu`)
    go to `extra_cases`, described by `extra` (case name -> shape and dtype).
    """
    frozen = frozen or {}
    cases = [
        {
            "name": case.name,
            "shape": case.shape,
            "dtype": case.dtype,
            "total_rows": spec.jagged_rows(case),
            "frozen": frozen.get(case.name, {}),
        }
        for case in spec.cases("performance")
    ]
    document = {
        "schema_version": SCHEMA_VERSION,
        "op": spec.name,
        "lengths": spec.lengths_rule,
        "inputs": list(spec.input_names),
        "cases": cases,
    }
    if extra:
        document["extra_cases"] = [
            {"name": name, **info, "frozen": frozen.get(name, {})}
            for name, info in sorted(extra.items())
        ]
    return json.dumps(document, indent=2, sort_keys=False) + "\n"


def all_cases(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c
        for c in [*data["cases"], *data.get("extra_cases", [])]
        if isinstance(c, dict) and "name" in c
    ]


def frozen_sections(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """case name -> soc -> frozen entry, as currently written."""
    return {c["name"]: dict(c.get("frozen") or {}) for c in all_cases(data)}


def extra_cases(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Shape and dtype of the frozen cases outside the performance list."""
    return {
        c["name"]: {"shape": c["shape"], "dtype": c["dtype"]} for c in data.get("extra_cases", [])
    }
