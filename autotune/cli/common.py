"""What the command modules share: the consoles, the common options and a few formatters."""

from __future__ import annotations

import warnings
from typing import Annotated

import typer
from rich.console import Console

console = Console(width=max(Console().width, 200))
err_console = Console(stderr=True)

OpOption = Annotated[list[str] | None, typer.Option("--op", help="Op name (repeatable).")]
SocOption = Annotated[
    str | None,
    typer.Option("--soc", help="cpu (Triton interpreter), a GPU such as H200, or an Ascend soc."),
]
DeviceOption = Annotated[
    str, typer.Option("--soc", help="The device: a GPU such as H200, an NPU, or cpu.")
]
NpuModeOption = Annotated[
    str,
    typer.Option(
        "--npu-mode",
        help="Ascend only: simd (the default) or simt (950 family: compile_mode=simt_only, warps searched).",
    ),
]
NpuOptionsOption = Annotated[
    str,
    typer.Option(
        "--npu-options",
        help="Ascend SIMD only: compiler options to search beside the tiles and multibuffer, "
        "comma-separated, or all (`autotune space` lists those of a kernel; default: none).",
    ),
]


def npu_option_names(text: str) -> tuple[str, ...]:
    """`--npu-options unit_flag,tile_mix_cube_loop` as names (checked by the backend)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


DbOption = Annotated[
    str | None,
    typer.Option(help="Database URL (default: AUTOTUNE_DB, else sqlite:///autotune.db)."),
]
GpuSocOption = Annotated[
    str | None,
    typer.Option(
        "--gpu-soc",
        help="The GPU whose upstream times are the GPU baseline, e.g. H200 (default: "
        "AUTOTUNE_GPU_SOC, else the newest upstream row measured on any GPU).",
    ),
]


def database_of(url: str | None, create: bool = True):
    """The database of `--db`, else of the settings (AUTOTUNE_DB, else sqlite:///autotune.db);
    `create=False` for commands that only read: a missing SQLite file is a one-line error."""
    from autotuner.settings import settings
    from storage import open_database

    return open_database(url or settings().db, create=create)


def database_if_any(url: str | None):
    """The database, or None with a note on stderr where its SQLite file does not exist (for
    commands whose main source is the checkout, the database adding to it)."""
    from storage import MissingDatabase

    try:
        return database_of(url, create=False)
    except MissingDatabase as exc:
        err_console.print(f"note: {exc}", markup=False, highlight=False, soft_wrap=True)
        return None


def next_step(text: str) -> None:
    """The one-line hint a stage ends with: what to run next (on stderr, so that a command's
    output stays what it is)."""
    err_console.print(f"next: {text}", markup=False, highlight=False, soft_wrap=True)


def quiet_interpreter() -> None:
    # numpy warns about masked-out lanes (0/0, log 0) the interpreter still computes.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")


def config_text(config: dict | None) -> str:
    return " ".join(f"{k}={v}" for k, v in (config or {}).items())
