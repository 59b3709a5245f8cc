"""Rewriting several project files as one step: all of them or none, modes kept."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path

from .errors import UserError

#: The mode of a file that did not exist before, before the umask.
NEW_FILE_MODE = 0o666


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _unwritable(path: Path) -> str | None:
    """Why `path` cannot be replaced, or None. A file or folder without a write bit counts as
    read-only even where the user could write it anyway (root): its owner said so."""
    folder = _existing_ancestor(path.parent)
    if not folder.is_dir():
        return f"{folder} is not a folder"
    if not os.access(folder, os.W_OK | os.X_OK) or not folder.stat().st_mode & 0o222:
        return f"folder {folder} is not writable"
    if path.exists():
        if not path.is_file():
            return f"{path} is not a regular file"
        if not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222:
            return f"{path} is read-only"
    return None


def unwritable(path: Path) -> str | None:
    """Why `path` cannot be created or replaced (as `write_files` judges it), or None."""
    return _unwritable(path)


def check_writable(paths: Iterable[Path]) -> None:
    """UserError "nothing written: ..." if a path cannot be written: asked before anything (a
    lock file, a database) is made beside them."""
    problems = [reason for path in paths if (reason := _unwritable(path))]
    if problems:
        raise UserError(f"nothing written: {problems[0]}")


def write_files(texts: dict[Path, str | bytes]) -> None:
    """Replace each path's text (or bytes). Every target is checked first, then each text goes
    to a temporary file beside its target, then all are renamed into place; on any failure no
    target has changed. Existing files keep their mode. OSErrors are one-line UserErrors."""
    check_writable(texts)
    temporaries: dict[Path, Path] = {}
    old: dict[Path, bytes | None] = {}
    renamed: list[Path] = []
    try:
        for path, text in texts.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else NEW_FILE_MODE & ~_umask()
            handle, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            temporaries[path] = Path(name)
            with os.fdopen(handle, "wb") as stream:
                stream.write(text.encode("utf-8") if isinstance(text, str) else text)
            os.chmod(name, mode)
            old[path] = path.read_bytes() if path.exists() else None
        for path, temporary in temporaries.items():
            os.replace(temporary, path)
            renamed.append(path)
    except OSError as exc:
        _undo(renamed, old)
        raise UserError(f"nothing written: {exc.strerror or exc} ({exc.filename})") from None
    except BaseException:
        _undo(renamed, old)
        raise
    finally:
        for temporary in temporaries.values():
            temporary.unlink(missing_ok=True)


def _undo(renamed: list[Path], old: dict[Path, bytes | None]) -> None:
    """Put back the files renamed before a failure (best effort: their folders were writable)."""
    for path in renamed:
        if old[path] is None:
            path.unlink(missing_ok=True)
        else:
            write_files({path: old[path]})
