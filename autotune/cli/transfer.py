"""`autotune export` and `autotune import`: results between databases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from core.errors import UserError

from .common import DbOption, OpOption, console, database_of


def export(
    file: Annotated[Path, typer.Argument(help="The JSON file to write.")],
    op: OpOption = None,
    soc: Annotated[str | None, typer.Option("--soc", help="Only this soc.")] = None,
    db: DbOption = None,
) -> None:
    """Write baselines, frozen versions, accuracy verdicts and ceilings to a versioned JSON file."""
    from core.socs import check_soc
    from ops import get_op
    from storage.transfer import export_document, write_export

    ops = [get_op(name).name for name in op or []]
    if soc:
        check_soc(soc)
    if not file.parent.is_dir():
        raise UserError(f"cannot write {file}: folder {file.parent} does not exist")
    document = export_document(database_of(db, create=False), ops, soc)
    write_export(file, document)
    console.print(
        f"exported {len(document['baselines'])} baselines and "
        f"{len(document['frozen_versions'])} frozen versions, {len(document['accuracy'])} "
        f"accuracy verdicts and {len(document['ceilings'])} device ceilings to {file}",
        markup=False,
        highlight=False,
    )


def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `autotune export`.")],
    db: DbOption = None,
) -> None:
    """Add the rows of an export (`autotune export`); rows already there are skipped. A row this
    checkout does not know (op, kernel, case, soc, a config outside its kernel's space) or a
    frozen version whose content does not match its hash refuses the whole file."""

    from autotuner.freeze.import_check import import_export
    from storage.transfer import parse_document, read_export

    document = read_export(file)
    parse_document(document)  # a malformed file is refused before any database is opened
    result = import_export(database_of(db), document)
    console.print(
        f"imported {file}: {result.baselines_added} baselines added, {result.baselines_skipped} "
        f"skipped; {result.versions_added} frozen versions added, {result.versions_skipped} skipped; "
        f"{result.accuracy_added} accuracy verdicts added, {result.accuracy_skipped} skipped; "
        f"{result.ceilings_added} device ceilings added, {result.ceilings_skipped} skipped",
        markup=False,
        highlight=False,
    )
