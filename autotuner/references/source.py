"""Where verify's second reference comes from: upstream run here, or a reference set saved (or
fetched from a reference server) on another machine. Sources are small frozen values, so verify's
worker processes get them as they are."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

import torch

from ops.spec import Case, OpSpec, Tensors

from .store import ReferenceSet


class ReferenceSource(ABC):
    @abstractmethod
    def upstream(self, spec: OpSpec, case: Case, inputs: Tensors) -> tuple[Tensors, str | None]:
        """Upstream's outputs of the case (those it can produce), and where they came from
        ("on H200, saved 2026-12-04"; None: run here)."""

    @abstractmethod
    def check(self, todo: list[tuple[OpSpec, Case]]) -> None:
        """Refuse, in one line naming the case, the first case this source cannot give, before
        any case runs (so nothing is written for a set that does not fit)."""


@dataclass(frozen=True)
class LiveUpstream(ReferenceSource):
    """Upstream's kernels on this machine's device."""

    def upstream(self, spec: OpSpec, case: Case, inputs: Tensors) -> tuple[Tensors, str | None]:
        return spec.run_upstream(inputs, case), None

    def check(self, todo: list[tuple[OpSpec, Case]]) -> None:
        return None  # each case runs upstream as it comes


#: The default source: upstream beside the port.
LIVE = LiveUpstream()


@dataclass(frozen=True)
class SavedReferences(ReferenceSource):
    """A reference set in a folder (`--references DIR`)."""

    root: Path

    def upstream(self, spec: OpSpec, case: Case, inputs: Tensors) -> tuple[Tensors, str | None]:
        outputs, entry = ReferenceSet(self.root).outputs(spec, case, inputs)
        return outputs, entry.label()

    def check(self, todo: list[tuple[OpSpec, Case]]) -> None:
        references = ReferenceSet(self.root)
        for spec, case in todo:
            references.check(spec, case, spec.make_inputs(case, torch.device("cpu")))
