"""`autotune lint`: ATK folders against the layout."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .common import console, err_console


def lint(
    path: Annotated[Path | None, typer.Argument(help="An op folder or a folder of them.")] = None,
    fix: Annotated[
        bool,
        typer.Option(
            "--fix",
            help="Render each folder's support files and port block again first (frozen configs kept).",
        ),
    ] = False,
) -> None:
    """Check ATK folders against DESIGN.md: files, provenance, license, yaml fields, and that
    the rendered files (support files, port blocks) are current."""
    from autotuner.atk.lint import fix as run_fix
    from autotuner.atk.lint import lint as run_lint
    from core.paths import ATK_ROOT, project_root

    target = path or project_root() / ATK_ROOT
    if fix:
        for written in run_fix(target):
            console.print(f"rendered {written}", markup=False, highlight=False, soft_wrap=True)
    problems = run_lint(target)
    for problem in problems:
        console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if problems:
        err_console.print(f"{len(problems)} problem(s)")
        raise typer.Exit(1)
    console.print(f"{target}: no problems")
