"""Writing a pandas DataFrame as the command line's formats: a rich table, CSV, Parquet, JSON or
Markdown."""

from __future__ import annotations

import io
import sys

import pandas as pd
from rich.console import Console
from rich.table import Table

from core.errors import UserError

FORMATS = ("table", "csv", "parquet", "json", "md")


def _cell(value) -> str:
    if value is None or (not isinstance(value, (list, dict)) and pd.isna(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def rich_table(frame: pd.DataFrame, title: str, caption: str | None = None) -> Table:
    table = Table(title=title, caption=caption)
    for column in frame.columns:
        numeric = pd.api.types.is_numeric_dtype(frame[column])
        table.add_column(str(column), justify="right" if numeric else "left")
    for row in frame.itertuples(index=False):
        table.add_row(*(_cell(v) for v in row))
    return table


def markdown(frame: pd.DataFrame) -> str:
    """A pipe table of the frame's cells as they are (format numbers first)."""
    lines = ["| " + " | ".join(map(str, frame.columns)) + " |",
             "|" + "---|" * len(frame.columns)]  # fmt: skip
    lines += [
        "| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join(lines) + "\n"


def emit(
    frame: pd.DataFrame, fmt: str, console: Console, title: str, caption: str | None = None
) -> None:
    """Write the frame to standard output in `fmt`; Parquet only where that is not a terminal."""
    if fmt not in FORMATS:
        raise UserError(f"unknown --format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "table":
        console.print(rich_table(frame, title, caption))
    elif fmt == "parquet":
        if sys.stdout.isatty():
            raise UserError("Parquet is binary: redirect it to a file, e.g. > trials.parquet")
        buffer = io.BytesIO()
        frame.to_parquet(buffer, index=False)
        sys.stdout.buffer.write(buffer.getvalue())
        sys.stdout.flush()
    else:
        text = {
            "csv": lambda: frame.to_csv(index=False),
            "json": lambda: frame.to_json(orient="records", indent=1) + "\n",
            "md": lambda: markdown(frame),
        }[fmt]()
        sys.stdout.write(text)
        sys.stdout.flush()
