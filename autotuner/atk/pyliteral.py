"""Python literals laid out the way `ruff format` lays them out, for generated source."""

from __future__ import annotations

import json
from typing import Any

LINE_LENGTH = 100


def _scalar(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    raise TypeError(f"cannot write {type(value).__name__} as a literal")


def _brackets(value: Any) -> tuple[str, str]:
    if isinstance(value, dict):
        return "{", "}"
    if isinstance(value, tuple):
        return "(", ")"
    return "[", "]"


def _items(value: Any, indent: int) -> list[str]:
    if isinstance(value, dict):
        return [f"{_scalar(k)}: {format_literal(v, indent)}" for k, v in value.items()]
    return [format_literal(v, indent) for v in value]


def format_literal(value: Any, indent: int = 0, prefix: int = 0) -> str:
    """`value` as source; `indent` is the column of the enclosing line, `prefix` what precedes it."""
    if not isinstance(value, dict | list | tuple):
        return _scalar(value)
    open_, close = _brackets(value)
    if not value:
        return open_ + close
    flat = _items(value, indent + 4)
    one_line = (
        open_
        + ", ".join(flat)
        + ("," if isinstance(value, tuple) and len(value) == 1 else "")
        + close
    )
    # A trailing "," after the literal inside its parent costs one column.
    if "\n" not in one_line and indent + prefix + len(one_line) + 1 <= LINE_LENGTH:
        return one_line
    pad = " " * (indent + 4)
    lines = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = f"{_scalar(k)}: "
            lines.append(f"{pad}{key}{format_literal(v, indent + 4, len(key))},")
    else:
        lines.extend(f"{pad}{format_literal(v, indent + 4)}," for v in value)
    return open_ + "\n" + "\n".join(lines) + "\n" + " " * indent + close
