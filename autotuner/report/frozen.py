"""The checkout as a source of results: the frozen versions its performance json files hold.

A fresh clone has an empty database, but each op's `<op>_performance.json` carries, per case and
soc, the frozen config with its time, the default's, the speedup and the GPU baseline, as
`autotune freeze` wrote them. They are read here in the shape of a stored `FrozenVersion`, so the
dashboard builds the same rows from either; rows of the database override these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.paths import performance_json, project_root
from ops import all_ops

from ..atk.performance_json import frozen_sections, read

DATABASE = "database"


@dataclass(frozen=True)
class RepositoryVersion:
    """The frozen entries of one (op, soc, label) as the checkout holds them: "kernel case" -> entry
    (config and numbers), as in `storage.FrozenVersion.entries`."""

    op: str
    soc: str
    label: str
    date: str
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def created_at(self) -> datetime | None:
        try:
            return datetime.fromisoformat(self.date).replace(tzinfo=UTC)
        except ValueError:
            return None

    @property
    def source(self) -> str:
        return repository_source(self.date, self.label)


def repository_source(date: str, label: str) -> str:
    """How a page names a value that comes from the checkout."""
    return f"from the repository (frozen at {date or 'an unknown date'}, {label})"


def _files(root: Path) -> dict[str, Path]:
    return {name: performance_json(name, root) for name in all_ops()}


def checkout() -> Path | None:
    """The checkout the service runs in, or None outside one (then there is nothing to read)."""
    try:
        return project_root()
    except UserError:
        return None


def repository_stamp(root: Path | None) -> tuple[float, ...]:
    """The performance json files' modification times: the versions change when these do."""
    if root is None:
        return ()
    return tuple(p.stat().st_mtime for p in _files(root).values() if p.is_file())


def repository_versions(
    root: Path | None, op: str | None = None, soc: str | None = None
) -> list[RepositoryVersion]:
    """The frozen versions in the checkout's performance json files, one per (op, soc, label,
    date), sorted; a missing or unreadable file contributes nothing. Read again only when a
    file changed (the service asks on every page)."""
    if root is None:
        return []
    key = (root, repository_stamp(root))
    if _READ.get("key") != key:
        _READ.update(key=key, versions=_read_versions(root))
    return [v for v in _READ["versions"] if (not op or v.op == op) and (not soc or v.soc == soc)]


#: The versions last read, and the (root, file times) they were read at.
_READ: dict[str, Any] = {}


def _read_versions(root: Path) -> list[RepositoryVersion]:
    found: dict[tuple[str, str, str, str], RepositoryVersion] = {}
    for name, path in sorted(_files(root).items()):
        if not path.is_file():
            continue
        try:
            sections = frozen_sections(read(path))
        except UserError:
            continue
        for case, by_soc in sections.items():
            for soc_name, section in by_soc.items():
                label, date = str(section.get("label", "")), str(section.get("date", ""))
                version = found.setdefault(
                    (name, soc_name, label, date), RepositoryVersion(name, soc_name, label, date)
                )
                for kernel, entry in (section.get("kernels") or {}).items():
                    version.entries[f"{kernel} {case}"] = entry
    return [found[key] for key in sorted(found)]
