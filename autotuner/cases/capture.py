"""`autotune.capture(path)`: the shapes, dtypes and lengths a workload runs through the ports.

Inside the context every launcher call of a port that picks its own config (no `config=`, the
way a user calls it) is recorded at the port's lookup, `_pick_config`: the op, the kernel, the
shape and dtype the launcher looks up, and a histogram of the call's sequence lengths. The
lengths come from the offsets among the launcher's local variables (the first 1-D integer
tensor of B + 1 entries), read as `--offsets` reads them. Calls of one op with one shape and
dtype are merged: their counts summed, their histograms added. When the block ends without an
exception, the cases are written to `path`, the most frequent first, for
`autotune run --op OP --cases-file path`.

It sees the ports as `ops.ports.load_port` loads them: the op specs' launches, and a workload
calling `load_port(op).<launcher>(...)`. Reading the offsets waits for the device once per call,
so capture a representative stretch of a workload, not a timed one.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import torch

from core.errors import UserError
from ops import all_ops
from ops.jagged import skewed_lengths
from ops.ports import load_port
from ops.spec import OpSpec

from .bound import Room, check_entry
from .store import CaseWarning, Entry, bin_edges, case_of, entry_of, histogram, write_file


@dataclass
class Seen:
    """The calls of one op with one shape and dtype."""

    calls: int = 0
    kernels: Counter[str] = field(default_factory=Counter)
    #: Histogram bin (`store.edge`) -> sequences, over every call whose offsets were found.
    bins: Counter[int] = field(default_factory=Counter)


@dataclass
class Recorder:
    """What a capture has seen so far, by (op, shape, dtype)."""

    seen: dict[tuple[str, tuple[tuple[str, int], ...], str], Seen] = field(default_factory=dict)

    def record(
        self,
        spec: OpSpec,
        kernel: str,
        shape: dict[str, int],
        dtype: str,
        offsets: list[int] | None,
    ) -> None:
        try:
            case = spec.case_from_shape(dict(shape), dtype, offsets)
        except ValueError:  # not a case autotune can tune (an unknown dtype, an empty batch)
            return
        seen = self.seen.setdefault((spec.name, tuple(case.shape.items()), case.dtype), Seen())
        seen.calls += 1
        seen.kernels[kernel] += 1
        if offsets is not None:
            lengths = np.maximum(np.asarray(case.lengths, dtype=np.int64), 0)
            edges = bin_edges(int(lengths.max(initial=0)))
            bins, counts = np.unique(
                np.searchsorted(edges, lengths, "right") - 1, return_counts=True
            )
            seen.bins.update(dict(zip(bins.tolist(), counts.tolist(), strict=True)))

    def entries(self) -> list[Entry]:
        """One named entry per (op, shape, dtype), the most frequent first."""
        found = []
        room = Room.here()
        for (op, shape, dtype), seen in self.seen.items():
            spec = all_ops()[op]
            entry: Entry = {"op": op, "shape": dict(shape), "dtype": dtype, "source": "capture"}
            try:  # what tuning it would take here, before its lengths are made
                check_entry(spec, entry, room)
            except UserError as exc:
                warnings.warn(f"{exc}; not captured", CaseWarning, stacklevel=2)
                continue
            bins = seen.bins
            if not bins:  # no launcher call of this op had offsets among its variables
                entry["source"] = "capture (no offsets seen: the built-in skew)"
                standard = skewed_lengths(entry["shape"]["B"], entry["shape"]["max_seq_len"])
                edges = bin_edges(max(standard))
                bins = Counter(int(np.searchsorted(edges, n, "right")) - 1 for n in standard)
            entry |= {
                "calls": seen.calls,
                "kernels": dict(sorted(seen.kernels.items())),
                "histogram": histogram(bins),
            }
            found.append(entry_of(case_of(spec, entry, "performance"), entry))
        return sorted(found, key=lambda e: (-e["calls"], e["name"]))


def _offsets(port: ModuleType, batch: int) -> list[int] | None:
    """The offsets of the innermost launcher frame of `port` that holds them, on the host."""
    frame = inspect.currentframe()
    while frame is not None:
        if frame.f_globals is vars(port):
            for value in frame.f_locals.values():
                if (
                    isinstance(value, torch.Tensor)
                    and value.dim() == 1
                    and value.dtype in (torch.int32, torch.int64)
                    and value.numel() == batch + 1
                ):
                    return value.tolist()
        frame = frame.f_back
    return None


def _hook(recorder: Recorder, spec: OpSpec, port: ModuleType, pick: Callable) -> Callable:
    def pick_config(kernel: str, shape: dict, dtype: str, device: Any, default: dict) -> dict:
        recorder.record(spec, kernel, shape, dtype, _offsets(port, shape.get("B", -1)))
        return pick(kernel, shape, dtype, device, default)

    return pick_config


@contextlib.contextmanager
def capture(path: str | Path) -> Iterator[Recorder]:
    """Record the port launcher calls of the block; write them as user cases to `path`."""
    recorder = Recorder()
    hooked = []
    try:
        for name, spec in all_ops().items():
            port = load_port(name)
            hooked.append((port, port._pick_config))
            port._pick_config = _hook(recorder, spec, port, port._pick_config)
        yield recorder
    finally:
        for port, pick in reversed(hooked):
            port._pick_config = pick
    write_file(Path(path), recorder.entries())
