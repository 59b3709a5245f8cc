"""`autotune show`, `autotune trials` and `autotune report`: stored results as tables."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from autotuner.measure.numbers import short_number, speedup_text
from core.errors import UserError
from core.socs import CPU

from .common import (
    DbOption,
    OpOption,
    SocOption,
    config_text,
    console,
    database_if_any,
    database_of,
)


def show(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    soc: SocOption = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Database URL for the history (default: AUTOTUNE_DB, else sqlite:///autotune.db)."
        ),
    ] = None,
) -> None:
    """The frozen table of an op (from its performance json) and its history across labels."""
    from autotuner.atk.performance_json import frozen_sections, read
    from autotuner.freeze.history import history_rows
    from core.paths import performance_json
    from ops import get_op

    spec = get_op(op)
    sections = frozen_sections(read(performance_json(op)))
    table = Table(title=f"{op}: frozen configs")
    for column in (
        "soc",
        "label",
        "kernel",
        "case",
        "config",
        "median ms",
        "p20-p80 ms",
        "default ms",
        "speedup",
        "GPU baseline ms",
        "ratio to GPU",
    ):
        table.add_column(
            column,
            justify="right" if "ms" in column or column in ("speedup", "ratio to GPU") else "left",
        )
    rows = 0
    for case_name, by_soc in sections.items():
        for soc_name, section in sorted(by_soc.items()):
            if soc and soc_name != soc:
                continue
            for kernel, entry in section["kernels"].items():
                baseline = entry.get("gpu_baseline_ms")
                band = f"{short_number(entry.get('p20_ms'))}-{short_number(entry.get('p80_ms'))}"
                speedup = speedup_text(entry.get("speedup_over_default"))
                ratio = f"{entry['median_ms'] / baseline:.2f}" if baseline else "-"
                table.add_row(
                    soc_name,
                    section["label"],
                    kernel,
                    case_name,
                    config_text(entry["config"]),
                    short_number(entry["median_ms"]),
                    band,
                    short_number(entry.get("default_ms")),
                    speedup,
                    short_number(baseline),
                    ratio,
                )
                rows += 1
    if any(soc_name == CPU for by_soc in sections.values() for soc_name in by_soc):
        table.caption = "soc cpu: Triton interpreter times, not performance numbers"
    console.print(table if rows else f"{op}: nothing frozen" + (f" on {soc}" if soc else ""))
    changes = _label_changes(sections, soc)
    if changes.row_count:
        console.print(changes)
    database = database_if_any(db)
    history = history_rows(database, spec.name, soc) if database else []
    if history:
        past = Table(title=f"{op}: frozen versions")
        for column in ("soc", "label", "frozen at", "entries", "geomean speedup over default"):
            past.add_column(column)
        for row in history:
            past.add_row(*row)
        console.print(past)


def _label_changes(sections: dict, soc: str | None) -> Table:
    """Each frozen entry against the entry of the label it replaced: the configs, the median as
    frozen then, and both re-timed side by side in the new study's settlement."""
    table = Table(
        title="from the label before: both configs re-timed side by side in the newer study",
        caption="'-': the newer study did not measure the config frozen before",
    )
    for column in ("soc", "kernel", "case", "labels", "config then", "ms then", "side by side ms",
                   "speedup"):  # fmt: skip
        table.add_column(
            column, justify="right" if "ms" in column or column == "speedup" else "left"
        )
    interpreter = False
    for case_name, by_soc in sections.items():
        for soc_name, section in sorted(by_soc.items()):
            if soc and soc_name != soc:
                continue
            for kernel, entry in section["kernels"].items():
                before = entry.get("previous")
                if not before:
                    continue
                same = before.get("config") == entry["config"]
                side = (
                    f"{short_number(before['retimed_ms'])} -> {short_number(before['retimed_now_ms'])}"
                    if "retimed_ms" in before
                    else "-"
                )
                table.add_row(
                    soc_name, kernel, case_name,
                    f"{before.get('label')} -> {entry.get('label') or section['label']}",
                    "unchanged" if same else config_text(before.get("config") or {}),
                    short_number(before.get("median_ms")), side,
                    speedup_text(before.get("speedup")),
                )  # fmt: skip
                interpreter = interpreter or soc_name == CPU
    if interpreter:
        table.caption += "; soc cpu: Triton interpreter times, not performance numbers"
    return table


def trials(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    soc: SocOption = None,
    case: Annotated[str | None, typer.Option("--case", help="Only this case.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="table, csv, parquet (redirect it) or json.")
    ] = "table",
    db: DbOption = None,
) -> None:
    """Every trial of the op's studies, one row each: config, state, category, times, error."""
    from autotuner.report.tables import emit
    from autotuner.report.trials import trials_frame
    from ops import get_op

    if fmt not in ("table", "csv", "parquet", "json"):
        raise UserError(f"unknown --format {fmt!r}; use table, csv, parquet or json")
    frame = trials_frame(database_of(db, create=False), op, soc, case)
    if frame.empty:
        get_op(op)  # an unknown op is an error; a known one without studies an empty table
    note = (
        "soc cpu: Triton interpreter times, not performance numbers"
        if CPU in set(frame.soc)
        else None
    )
    emit(frame, fmt, console, f"{op}: {len(frame)} trials", note)


def report(
    soc: SocOption = None,
    op: OpOption = None,
    fmt: Annotated[str, typer.Option("--format", help="md or csv.")] = "md",
    db: DbOption = None,
    measure: Annotated[
        bool,
        typer.Option(
            "--measure", help="First measure and store this device's ceilings (roofline)."
        ),
    ] = False,
) -> None:
    """Per op and case: frozen speedup over the default, ratio to the GPU, share of the roofline."""
    from autotuner.report.performance import report_text
    from ops import get_op

    ops = [get_op(name).name for name in op or []]
    print(report_text(database_of(db, create=measure), soc, ops, fmt, measure), end="")
