"""One checkout, one truth: the op specs a command loads are those of the checkout it acts on.

The ports, frozen configs and performance json come from the checkout a command acts on
(`core.paths.project_root`: AUTOTUNE_ROOT, else the current directory); the op specs
(`ops/*.py`: cases, tunables, golden, constraints) are Python modules, imported from wherever the
package is installed. Run in a second checkout (a worktree for an experiment) with the package
installed from the first, a command would mix the first checkout's specs with the second's
ports. It stops instead, in one line.
"""

from __future__ import annotations

from pathlib import Path

import ops
from core.errors import UserError
from core.paths import project_root


def _sources(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.glob("*.py"))}


def other_checkout() -> str | None:
    """Why the loaded op specs are not the acted-on checkout's, in one line; None if they are,
    or if the command acts on no checkout with op specs of its own."""
    try:
        root = project_root()
    except UserError:
        return None
    theirs = root / "ops"
    loaded = Path(ops.__file__).resolve().parent
    if not theirs.is_dir() or theirs.resolve() == loaded:
        return None
    mine, other = _sources(loaded), _sources(theirs)
    differ = sorted(n for n in mine.keys() | other.keys() if mine.get(n) != other.get(n))
    if not differ:
        return None
    more = f" and {len(differ) - 3} more" if len(differ) > 3 else ""
    return (
        f"the installed autotune belongs to another checkout: its op specs ({loaded}) are not "
        f"those of {root}, the checkout this command acts on ({', '.join(differ[:3])}{more} "
        f"differ); install this one (pip install -e {root}) or run from {loaded.parent}"
    )
