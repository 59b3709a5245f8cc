"""The `autotune` command line: one module per command group, registered here in the order
`autotune --help` lists them. The commands parse options and print; the stages do the work."""

from __future__ import annotations

import sys
import warnings

import typer

from autotuner.checkout import other_checkout
from autotuner.settings import settings
from core.errors import UserError

from . import atk, baseline, catalog, freeze, references, report, search, serve, transfer, verify
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
app.command("reference-server")(references.reference_server)
app.command()(atk.lint)
app.command()(catalog.space)
app.command("cases")(catalog.list_cases)
app.command("ops")(catalog.list_ops)


def _fail(message: str, code: int = 2) -> None:
    err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
    sys.exit(code)


def _usage_line(exc: typer.TyperException) -> str:
    """A usage error as one line, with where to read the command's options."""
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    context = getattr(exc, "ctx", None)
    command = context.info_name if context is not None and context.parent is not None else ""
    return f"{text.splitlines()[0] if text else type(exc).__name__} (see autotune {command} --help)".replace(
        "  ", " "
    )


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Our warnings about the user's input are one line; any other as Python writes it."""
    from autotuner.cases.store import CaseWarning

    if issubclass(category, CaseWarning):
        err_console.print(f"warning: {message}", markup=False, highlight=False, soft_wrap=True)
    else:
        _python_warning(message, category, filename, lineno, file, line)


_python_warning = warnings.showwarning


def _debug() -> bool:
    """AUTOTUNE_DEBUG (`Settings.debug`); off where the settings themselves are the error."""
    try:
        return settings().debug
    except UserError:
        return False


def main() -> None:
    """Console entry point: bad input, ours or an option's that typer refused, is one line on
    stderr and exit code 2 (typer's `Usage:` lines and boxes left out)."""
    warnings.showwarning = _show_warning
    if len(sys.argv) < 2:
        app()  # no arguments: the help, as typer writes it
    try:
        mixed = other_checkout()
        if mixed:
            raise UserError(mixed)
        code = app(standalone_mode=False)
    except typer.TyperException as exc:  # typer's usage errors: bad or missing options
        _fail(_usage_line(exc), getattr(exc, "exit_code", 2))
    except typer.Abort:
        sys.exit(130)
    except (UserError, ValueError) as exc:
        if _debug():
            raise
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
    sys.exit(code if isinstance(code, int) else 0)
