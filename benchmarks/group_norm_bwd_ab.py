"""A/B on a GPU of group_norm_mul_dropout's backward, whose fp32 case ties or loses to upstream
by the round (2026-12-03: frozen/upstream 1.038 in c5, 0.990 in c1 at b4c2720, the port steady
at 1.34 ms, upstream's own samples spread over 1.29-1.40 ms): where does the port's time go, and
does a program count that fills whole waves of the GPU help?

The port's bwd_dx runs NUM_PROGRAMS programs (a power of two, at most 32768: an Ascend launch
takes at most 65535 blocks) that loop over the rows; upstream launches one program per row. A
GPU runs a limited number of programs per SM at once (on Hopper at most 32 blocks, so 32 of one
warp), so 32768 one-warp programs on 132 SMs run in 7.76 waves, the last one three quarters
full. Per performance case, interleaved (`interleaved_ab.ab_line`, against the port at its
frozen config): upstream's raw dx kernel (its lock rows zeroed once, outside the timed calls)
and its dw/db sum; the port's bwd_dx at its frozen config, at program counts that are whole
waves of the device (`--waves`, by warps), and at powers of two; the port's bwd_dw at its frozen
config over the partial rows each bwd_dx leaves.

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/group_norm_bwd_ab.py \\
        --soc H200 --case n1048576_h2_d128_fp32
"""

from __future__ import annotations

import argparse

import torch
import triton
from interleaved_ab import Call, ab_line
from recsys_kernel_calls import CAP, GroupNormDx

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op

OP = GroupNormDx.op
#: Blocks an SM of compute capability 9.0 holds at once (CUDA C++ Programming Guide, "Technical
#: Specifications per Compute Capability": 32 resident blocks, 64 resident warps per SM).
BLOCKS_PER_SM, WARPS_PER_SM = 32, 64


def wave(num_warps: int, sms: int) -> int:
    """Programs of `num_warps` warps that one wave of the device holds."""
    return sms * min(BLOCKS_PER_SM, WARPS_PER_SM // num_warps)


def calls(case, device, soc: str, sms: int, waves: list[int]) -> dict[str, Call]:
    g = GroupNormDx(case, device)
    default = get_op(g.op).kernel("bwd_dx").default(case)
    frozen = frozen_config(g.op, soc, "bwd_dx", case.name) or default
    block_n, frozen_warps = frozen["BLOCK_N"], frozen["num_warps"]
    blocks = triton.cdiv(g.n, block_n)
    fns = {"port": g.port_dx(block_n, frozen_warps, min(frozen["NUM_PROGRAMS"], blocks))}
    fns["upstream_dx"] = g.upstream()
    for num_warps in sorted({frozen_warps, 2 * frozen_warps}):
        per_wave = wave(num_warps, sms)
        for k in waves:
            programs = min(k * per_wave, blocks)
            fns[f"w{num_warps}_waves{k}_{programs}"] = g.port_dx(block_n, num_warps, programs)
        for programs in (1 << (per_wave.bit_length() - 1), CAP // 2, CAP):
            name = f"w{num_warps}_pow2_{programs}"
            if name not in fns:
                fns[name] = g.port_dx(block_n, num_warps, min(programs, blocks))
    counts = {min(CAP, blocks), *(min(k * wave(frozen_warps, sms), blocks) for k in waves)}
    return fns | sums(g, case, soc, sorted(counts))


def sums(g: GroupNormDx, case, soc: str, counts: list[int]) -> dict[str, Call]:
    """The weight gradients' sums: upstream's over its lock rows; the port's frozen bwd_dw over
    the partial rows of bwd_dx at each program count."""
    default = get_op(g.op).kernel("bwd_dw").default(case)
    config = frozen_config(g.op, soc, "bwd_dw", case.name) or default
    options = {k: config[k] for k in ("BLOCK_N", "BLOCK_H", "num_warps")}

    def summed(rows: int, kernel, *args, **kwargs) -> Call:
        partials = [torch.randn(rows, g.h, device=g.device) for _ in "wb"]
        final = torch.empty(g.h, device=g.device), torch.empty(g.h, device=g.device)
        return lambda: kernel(*partials, *final, rows, *args, **kwargs), final

    port_sum = g.port._group_norm_bwd_dwdb_kernel[(triton.cdiv(g.h, config["BLOCK_H"]),)]
    out = {"upstream_dw": summed(g.locks, g.up._group_norm_bwd_dwdb[(g.h,)])}
    for rows in counts:
        out[f"port_dw_{rows}"] = summed(rows, port_sum, g.h, **options)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument("--case", action="append", help="a performance case (default: all)")
    parser.add_argument("--waves", type=int, nargs="+", default=[1, 2, 4, 7])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("group_norm_bwd_ab.py times kernels: it needs a GPU soc")
    sms = backend.limits.cores
    print(f"# {backend.describe()}, {sms} SMs, versions {backend.versions()}")
    for case in get_op(GroupNormDx.op).cases("performance"):
        if args.case and case.name not in args.case:
            continue
        fns = calls(case, backend.device, args.soc, sms, args.waves)
        dx = {k: v for k, v in fns.items() if not k.endswith("_dw") and "_dw_" not in k}
        dw = {k: v for k, v in fns.items() if k not in dx}
        print(f"{OP} {case.name} bwd_dx: {ab_line(backend, dx, args.rounds, args.reps)}")
        first = next(k for k in dw if k.startswith("port_dw_"))
        line = ab_line(backend, dw, args.rounds, args.reps, reference=first)
        print(f"{OP} {case.name} sums: {line}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
