"""The frozen configs of an op, from their one home: `npu_atk_test/<op>_performance.json`, which
holds per case and soc each kernel's frozen config with its numbers (`autotune freeze` writes it).

The port file's generated block (`FROZEN_CONFIGS`) and `frozen_configs/<soc>/<op>.json` are
renderings of it (`block`), and every reader (the settlement, warm starts, baselines) goes
through `FrozenStore`; `autotune lint` fails on a block that disagrees with the json.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.errors import UserError
from core.paths import performance_json as performance_json_path
from ops.spec import Config

from . import performance_json

#: soc -> kernel -> entries (case, dtype, shape, config), as the generated block holds them.
FrozenConfigs = dict[str, dict[str, list[dict[str, Any]]]]


@dataclass(frozen=True)
class Frozen:
    """One frozen (soc, kernel, case) with its config and the label it was frozen under."""

    soc: str
    kernel: str
    case: str
    dtype: str
    shape: dict[str, int]
    config: Config
    label: str | None


@dataclass(frozen=True)
class FrozenStore:
    """Every frozen config of one op, on every soc."""

    op: str
    entries: tuple[Frozen, ...]

    @classmethod
    def read(cls, op: str, root: Path | None = None) -> FrozenStore:
        """The op's store; empty where the op has no performance json yet, a UserError naming
        the file where it is damaged."""
        path = performance_json_path(op, root)
        if not path.exists():
            return cls(op, ())
        return cls.of(op, performance_json.read(path))

    @classmethod
    def of(cls, op: str, document: dict[str, Any]) -> FrozenStore:
        """The store of a performance json document (`performance_json.read` or `render`); a
        UserError where a frozen entry is malformed."""
        try:
            entries = tuple(
                Frozen(
                    soc,
                    kernel,
                    case["name"],
                    case["dtype"],
                    dict(case["shape"]),
                    dict(entry["config"]),
                    entry.get("label") or section.get("label"),
                )
                for case in performance_json.all_cases(document)
                for soc, section in (case.get("frozen") or {}).items()
                for kernel, entry in section["kernels"].items()
            )
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise UserError(f"{op}_performance.json: a malformed frozen entry ({exc!r})") from None
        return cls(op, entries)

    def on(self, soc: str) -> list[Frozen]:
        return [e for e in self.entries if e.soc == soc]

    def config(self, soc: str, kernel: str, case: str) -> Config | None:
        """The config frozen for (soc, kernel, case), if any."""
        return next(
            (
                dict(e.config)
                for e in self.entries
                if (e.soc, e.kernel, e.case) == (soc, kernel, case)
            ),
            None,
        )

    def block(self) -> FrozenConfigs:
        """The generated block's `FROZEN_CONFIGS`: socs and kernels sorted, entries by case."""
        out: FrozenConfigs = {}
        for e in sorted(self.entries, key=lambda e: (e.soc, e.kernel, e.case)):
            entry = {"case": e.case, "dtype": e.dtype, "shape": e.shape, "config": e.config}
            out.setdefault(e.soc, {}).setdefault(e.kernel, []).append(entry)
        return out
