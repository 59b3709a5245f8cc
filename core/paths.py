"""Where the project's files live: the ATK folders, frozen_configs/, cases/ and the kernel files."""

from __future__ import annotations

import os
from pathlib import Path

from .errors import UserError

ATK_ROOT = Path("experimental/triton/atk_test")


def project_root() -> Path:
    """The checkout a command acts on: `AUTOTUNE_ROOT` if set, else the nearest folder holding
    `experimental/triton/atk_test` from the current directory upward (as git finds its
    repository), never the installed package's own location."""
    env = os.environ.get("AUTOTUNE_ROOT")
    if env:
        if not Path(env).is_dir():
            raise UserError(
                f"AUTOTUNE_ROOT={env} is not a folder: point it at an autotune checkout, or unset it"
            )
        return Path(env)
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / ATK_ROOT).is_dir():
            return folder
    raise UserError(
        f"not inside an autotune checkout: no {ATK_ROOT} in {here} or above "
        "(cd into one, or set AUTOTUNE_ROOT)"
    )


def atk_dir(op: str, root: Path | None = None) -> Path:
    return (root or project_root()) / ATK_ROOT / op


def port_file(op: str, root: Path | None = None) -> Path:
    return atk_dir(op, root) / "npu_atk_test" / f"{op}.py"


def performance_json(op: str, root: Path | None = None) -> Path:
    return atk_dir(op, root) / "npu_atk_test" / f"{op}_performance.json"


def frozen_configs_file(soc: str, op: str, root: Path | None = None) -> Path:
    return (root or project_root()) / "frozen_configs" / soc / f"{op}.json"


def cases_file(op: str, root: Path | None = None) -> Path:
    """The op's user cases (`autotuner.cases.store`), kept in the repository like frozen configs."""
    return (root or project_root()) / "cases" / f"{op}.yaml"
