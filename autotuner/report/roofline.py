"""The roofline: a device's measured ceilings, and the share of them a timed part reaches.

Ceilings: memory bandwidth (a 2 GiB device-to-device copy: bytes read and written over its median
time) and dense matmul throughput per dtype (8192^3 `torch.matmul`; for fp32 with TF32 allowed,
the most an fp32-input kernel can get). They are measured on the device and stored, so a report
or the dashboard elsewhere can use them. A part's share: the op's traffic model
(`OpSpec.traffic`: bytes it must move, flops it must compute) over its time, as a fraction of
each ceiling; the larger of the two is the one that bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from sqlalchemy import select

from core.errors import UserError
from ops.spec import Case, OpSpec
from storage import Database, DeviceCeiling

from ..backends import Backend
from ..measure.environment import environment

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
COPY_BYTES = 2**31
MATMUL_N = 8192


@dataclass(frozen=True)
class Ceilings:
    soc: str
    bandwidth: float  # bytes per second
    flops: dict[str, float]  # dtype -> flops per second

    def describe(self) -> str:
        matmul = ", ".join(
            f"{d} {self.flops[d] / 1e12:.0f} TFLOP/s" for d in DTYPES if d in self.flops
        )
        return f"copy {self.bandwidth / 1e12:.2f} TB/s; matmul {matmul} (fp32 with TF32)"


@dataclass(frozen=True)
class Share:
    """Fractions of the ceilings one time reaches."""

    bandwidth: float
    compute: float

    @property
    def bound(self) -> float:
        return max(self.bandwidth, self.compute)

    @property
    def bound_by(self) -> str:
        return "memory" if self.bandwidth >= self.compute else "compute"


def measure_ceilings(backend: Backend) -> Ceilings:
    """Bytes per second of a copy and flops per second of a matmul per dtype, on `backend`."""
    if backend.is_interpreter:
        raise UserError("ceilings need a device: interpreter times are not performance numbers")
    device = backend.device
    source = torch.empty(COPY_BYTES, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    copy = backend.time(lambda: target.copy_(source))
    bandwidth = 2 * source.numel() / (copy.median_ms / 1e3)
    torch.backends.cuda.matmul.allow_tf32 = True
    flops = {}
    for name, dtype in DTYPES.items():
        a = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=dtype)
        b = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=dtype)
        timing = backend.time(lambda a=a, b=b: a @ b)
        flops[name] = 2 * MATMUL_N**3 / (timing.median_ms / 1e3)
    backend.release_memory()
    return Ceilings(backend.soc, bandwidth, flops)


def record_ceilings(db: Database, backend: Backend) -> Ceilings:
    """Measure the device's ceilings and store them."""
    ceilings = measure_ceilings(backend)
    row = DeviceCeiling(
        soc=ceilings.soc,
        bandwidth=ceilings.bandwidth,
        flops=ceilings.flops,
        environment=environment(backend),
    )
    with db.sessions() as session:
        session.add(row)
        session.commit()
    return ceilings


def from_row(row: DeviceCeiling) -> Ceilings:
    return Ceilings(row.soc, row.bandwidth, dict(row.flops))


def stored_ceilings(db: Database) -> dict[str, Ceilings]:
    """The newest stored ceilings of each soc."""
    query = select(DeviceCeiling).order_by(DeviceCeiling.measured_at, DeviceCeiling.id)
    with db.sessions() as session:
        return {row.soc: from_row(row) for row in session.scalars(query)}


def share(spec: OpSpec, case: Case, part: str, ms: float, ceilings: Ceilings) -> Share | None:
    """The fractions of the ceilings `ms` of one part reaches; None without a traffic model or a
    ceiling for the case's dtype."""
    try:
        moved, flops = spec.traffic(case, part)
    except NotImplementedError:
        return None
    if case.dtype not in ceilings.flops or ms <= 0:
        return None
    seconds = ms / 1e3
    return Share(moved / seconds / ceilings.bandwidth, flops / seconds / ceilings.flops[case.dtype])
