"""Roofline fractions of the port at upstream's default configs and at its frozen configs.

    python benchmarks/roofline.py --soc H200 --db URL [--op OP ...]    # on the device

Measures the device's ceilings: memory bandwidth (a 2 GiB device-to-device copy: bytes read and
written over its median time) and dense matmul throughput per dtype (8192^3 `torch.matmul`; for
fp32 with TF32 allowed, the most an fp32-input kernel can get). Then, per op, performance case and
part with both a "port_default" and a "port_frozen" baseline in the database (`autotune
baseline`), the op's traffic model (`OpSpec.traffic`: bytes it must move, flops it must compute)
over each time, as a fraction of the ceilings; the larger of the two fractions is the one that
bounds. Prints Markdown: the ceilings, a table, and the geometric mean of frozen over default per
part (per kernel, the verdicts' speedups: benchmarks/frozen_speedups.py).
"""

from __future__ import annotations

import argparse
import math
import statistics

import torch

from autotuner.backends import Backend, get_backend
from autotuner.baseline import latest
from ops import all_ops
from storage import open_database

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def ceilings(backend: Backend) -> dict[str, float]:
    """Bytes per second of a copy and flops per second of a matmul per dtype, on `backend`."""
    device = backend.device
    source = torch.empty(2**31, dtype=torch.uint8, device=device)
    target = torch.empty_like(source)
    copy = backend.time(lambda: target.copy_(source))
    out = {"bandwidth": 2 * source.numel() / (copy.median_ms / 1e3)}
    n = 8192
    torch.backends.cuda.matmul.allow_tf32 = True
    for name, dtype in DTYPES.items():
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        timing = backend.time(lambda a=a, b=b: a @ b)
        out[name] = 2 * n**3 / (timing.median_ms / 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--op", action="append")
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    peak = ceilings(backend)
    print(f"Ceilings on {backend.describe()}: copy {peak['bandwidth'] / 1e12:.2f} TB/s; matmul "
          + ", ".join(f"{d} {peak[d] / 1e12:.0f} TFLOP/s" for d in DTYPES)
          + " (fp32 with TF32)\n")  # fmt: skip
    print("| op | case | part | MB moved | GFLOP | default ms | frozen ms | speedup | "
          "default: % BW / % FLOP | frozen: % BW / % FLOP |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|")
    db = open_database(args.db)
    part_speedups = []
    with db.sessions() as session:
        for name, spec in all_ops().items():
            if args.op and name not in args.op:
                continue
            for case in spec.cases("performance"):
                for part in spec.parts:
                    default = latest(session, name, case.name, part, "port_default", backend.soc)
                    frozen = latest(session, name, case.name, part, "port_frozen", backend.soc)
                    if default is None or frozen is None:
                        continue
                    moved, flops = spec.traffic(case, part)
                    compute = peak[case.dtype]

                    def fractions(ms: float, moved=moved, flops=flops, compute=compute) -> str:
                        seconds = ms / 1e3
                        return f"{100 * moved / seconds / peak['bandwidth']:.0f} / {100 * flops / seconds / compute:.0f}"

                    speedup = default.median_ms / frozen.median_ms
                    part_speedups.append(speedup)
                    print(f"| {name} | {case.name} | {part} | {moved / 1e6:.1f} | {flops / 1e9:.2f} | "
                          f"{default.median_ms:.4f} | {frozen.median_ms:.4f} | {speedup:.2f}x | "
                          f"{fractions(default.median_ms)} | {fractions(frozen.median_ms)} |")  # fmt: skip
    print(f"\nGeometric mean of frozen over default: {statistics.geometric_mean(part_speedups) if part_speedups else math.nan:.3f}x over "
          f"{len(part_speedups)} (op, case, part) baselines, worst {min(part_speedups, default=math.nan):.3f}x.")  # fmt: skip


if __name__ == "__main__":
    main()
