"""How big a user case may be: its footprint (`OpSpec.footprint`) against the memory this
machine has free and the `max_case_bytes` setting, judged before anything is written or
allocated, so that a huge `--shape` is one line within seconds, not a swapping host.

A jagged shape's footprint is estimated from a sample of its batch (`SAMPLE_BATCH` sequences of
the built-in skew, scaled), so that B=10^8 is judged without making 10^8 lengths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import UserError

if TYPE_CHECKING:
    from ops.spec import Case, Footprint, OpSpec

    from ..backends import Backend

#: Sequences of a jagged shape its estimate is made from (the footprint is linear in B).
SAMPLE_BATCH = 4096


@dataclass(frozen=True)
class Room:
    """Bytes a case may take here: host memory, and device memory where it is apart from the
    host's and the backend can tell (None: the interpreter's device is the host; or unknown)."""

    host: int
    device: int | None
    #: The device's tensors live in host memory (the interpreter): they add to the host's.
    shared: bool
    #: `max_case_bytes` where it is what bounds a figure, for the message.
    capped: bool

    @classmethod
    def here(cls, backend: Backend | None = None) -> Room:
        """This machine's free memory (psutil; the backend's for its device), under the cap."""
        import psutil

        from ..settings import settings

        cap = settings().max_case_bytes
        host = psutil.virtual_memory().available
        device = backend.free_memory() if backend is not None else None
        capped = cap is not None and (cap < host or (device is not None and cap < device))
        if cap is not None:
            host = min(host, cap)
            device = None if device is None else min(device, cap)
        shared = backend is None or backend.is_interpreter
        return cls(host=host, device=device, shared=shared, capped=capped)


def gigabytes(n: int) -> str:
    """Bytes as people read them: 512 MB, 23.4 GB, 36.8 TB."""
    for unit, size in (("TB", 1e12), ("GB", 1e9)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n / 1e6:.3g} MB"


def too_big(footprint: Footprint, room: Room) -> str | None:
    """Why a case with this footprint does not fit the room, naming both figures; None if it fits."""
    host = footprint.host + (footprint.device if room.shared else 0)
    cap = " (AUTOTUNE_MAX_CASE_BYTES)" if room.capped else ""
    if host > room.host:
        return (
            f"needs about {gigabytes(host)} of host memory (inputs, outputs, float64 golden), "
            f"and {gigabytes(room.host)} is available{cap}"
        )
    if room.device is not None and footprint.device > room.device:
        return (
            f"needs about {gigabytes(footprint.device)} of device memory (inputs, outputs, "
            f"intermediates), and {gigabytes(room.device)} is free{cap}"
        )
    return None


def estimate(spec: OpSpec, shape: dict[str, int], dtype: str) -> Footprint:
    """The footprint of a shape with the built-in lengths, from a sample of its batch; ValueError
    (one line) for a shape the op does not take."""
    batch = shape.get("B", 0)
    if not spec.jagged or batch <= SAMPLE_BATCH:
        return spec.footprint(spec.case_from_shape(shape, dtype, None))
    sample = spec.case_from_shape({**shape, "B": SAMPLE_BATCH}, dtype, None)
    return spec.footprint(sample).scaled(batch / SAMPLE_BATCH)


def check(spec: OpSpec, label: str, footprint: Footprint, room: Room) -> None:
    """UserError in one line if the case does not fit."""
    if reason := too_big(footprint, room):
        raise UserError(
            f"user case {label} of {spec.name} {reason}: refused before anything was written; "
            "give a smaller shape"
        )


def check_case(spec: OpSpec, case: Case, room: Room) -> None:
    check(spec, case.name, spec.footprint(case), room)


def check_entry(spec: OpSpec, entry: dict, room: Room) -> None:
    """A cases-file entry whose lengths are yet to be made (a histogram's B quantiles, or none:
    the built-in skew), judged by its shape first; other entries wait for `check_case`."""
    shape = entry.get("shape")
    if "lengths" in entry or "offsets" in entry or not isinstance(shape, dict):
        return
    if all(isinstance(v, int) and not isinstance(v, bool) for v in shape.values()):
        try:
            dtype = str(entry.get("dtype", "float32"))
            footprint = estimate(spec, {str(k): v for k, v in shape.items()}, dtype)
        except ValueError:  # a shape the op does not take: `case_of` names what is wrong
            return
        label = entry.get("name") or ",".join(f"{k}={v}" for k, v in shape.items())
        check(spec, label, footprint, room)
