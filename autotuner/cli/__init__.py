"""The `autotune` command line: one module per command group, registered here in the order
`autotune --help` lists them. The commands parse options and print; the stages do the work."""

from __future__ import annotations

import os
import sys

import typer

from core.errors import UserError

from ..checkout import other_checkout
from . import atk, baseline, catalog, freeze, report, search, serve, transfer, verify
from .common import err_console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Search, freeze and check launch configs of Triton kernels ported to Ascend NPUs.",
)
app.command()(verify.verify)
app.command()(search.run)
app.command()(search.status)
app.command()(freeze.freeze)
app.command()(baseline.baseline)
app.command()(baseline.check)
app.command()(transfer.export)
app.command("import")(transfer.import_)
app.command()(report.show)
app.command()(report.trials)
app.command()(report.report)
app.command()(serve.serve)
app.command()(atk.lint)
app.command()(catalog.space)
app.command("cases")(catalog.list_cases)
app.command("ops")(catalog.list_ops)


def main() -> None:
    """Console entry point: bad input is one line on stderr and exit code 2."""
    try:
        mixed = other_checkout()
        if mixed:
            raise UserError(mixed)
        app()
    except (UserError, ValueError) as exc:
        if os.environ.get("AUTOTUNE_DEBUG") == "1":
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
