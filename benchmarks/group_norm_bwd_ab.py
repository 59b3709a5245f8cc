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

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op
from ops.ports import load_port

OP = "group_norm_mul_dropout"
#: Blocks an SM of compute capability 9.0 holds at once (CUDA C++ Programming Guide, "Technical
#: Specifications per Compute Capability": 32 resident blocks, 64 resident warps per SM).
BLOCKS_PER_SM, WARPS_PER_SM = 32, 64
CAP = 32768


def wave(num_warps: int, sms: int) -> int:
    """Programs of `num_warps` warps that one wave of the device holds."""
    return sms * min(BLOCKS_PER_SM, WARPS_PER_SM // num_warps)


def calls(case, device, soc: str, sms: int, waves: list[int]) -> dict[str, Call]:
    spec, port, up = get_op(OP), load_port(OP), get_op(OP).upstream.load()
    given = spec.make_inputs(case, device)
    x, u, w, b, dy = (given[k] for k in ("x", "u", "weight", "bias", "dy"))
    n, h, d = case.shape["N"], case.shape["H"], case.shape["D"]
    ratio, training, seed = spec.dropout_ratio, spec.training, spec.seed
    _, mean, rstd = port.group_norm_mul_dropout_fwd(x, u, w, b, spec.eps, ratio, training, seed)
    bh, bd = triton.next_power_of_2(h), triton.next_power_of_2(d)
    warps = min(max(bh * bd // 256, 1), 8)  # upstream's
    locks = min(n, 2048 if h * d <= 1024 else 1024)
    dw_locks, db_locks = (torch.zeros(locks, h, dtype=torch.float32, device=device) for _ in "wb")
    outs: dict[str, tuple[torch.Tensor, ...]] = {}

    def upstream_dx():
        dx, du = outs.setdefault("upstream_dx", (torch.empty_like(x), torch.empty_like(u)))
        return lambda: up._group_norm_mul_dropout_bwd_dx_du[(n,)](
            dx, du, dy, dw_locks, db_locks, x, u, None, w, b, mean, rstd, dx.stride(0),
            du.stride(0), dy.stride(0), x.stride(0), u.stride(0), 0, d, h, spec.eps, seed, ratio,
            GROUP_N=locks, BLOCK_D=bd, BLOCK_H=bh, TRAINING=training, CONCAT_UX=False,
            COMPUTE_Y=False, num_warps=warps,
        )  # fmt: skip

    def port_dx(name, block_n, num_warps, programs):
        dx, du = outs.setdefault(name, (torch.empty_like(x), torch.empty_like(u)))
        dw, db = (torch.empty(programs, h, dtype=torch.float32, device=device) for _ in "wb")
        return lambda: port._group_norm_mul_dropout_bwd_dx_du_kernel[(programs,)](
            dx, du, dy, x, u, w, b, mean, rstd, dw, db, n, h, d,
            seed, ratio, dx.stride(0), du.stride(0), dy.stride(0), x.stride(0), u.stride(0),
            BLOCK_N=block_n, BLOCK_H=bh, BLOCK_D=bd, TRAINING=training, num_warps=num_warps,
        )  # fmt: skip

    frozen = frozen_config(OP, soc, "bwd_dx", case.name) or spec.kernel("bwd_dx").default(case)
    block_n, frozen_warps = frozen["BLOCK_N"], frozen["num_warps"]
    blocks = triton.cdiv(n, block_n)
    fns = {"port": port_dx("port", block_n, frozen_warps, min(frozen["NUM_PROGRAMS"], blocks))}
    fns["upstream_dx"] = upstream_dx()
    for num_warps in sorted({frozen_warps, 2 * frozen_warps}):
        per_wave = wave(num_warps, sms)
        for k in waves:
            programs = min(k * per_wave, blocks)
            fns[f"w{num_warps}_waves{k}_{programs}"] = port_dx(
                f"w{num_warps}_waves{k}_{programs}", block_n, num_warps, programs
            )
        for programs in (1 << (per_wave.bit_length() - 1), CAP // 2, CAP):
            name = f"w{num_warps}_pow2_{programs}"
            fns.setdefault(name, port_dx(name, block_n, num_warps, min(programs, blocks)))
    calls_of = {name: (fn, outs[name]) for name, fn in fns.items()}
    calls_of.update(sums(port, up, case, device, soc, h, locks, waves, sms, frozen_warps, blocks))
    return calls_of


def sums(port, up, case, device, soc, h, locks, waves, sms, dx_warps, blocks) -> dict[str, Call]:
    """The weight gradients' sums: upstream's over its lock rows; the port's frozen bwd_dw over
    the partial rows of bwd_dx at CAP programs and at each whole-wave count."""
    spec = get_op(OP)
    config = frozen_config(OP, soc, "bwd_dw", case.name) or spec.kernel("bwd_dw").default(case)
    options = {k: config[k] for k in ("BLOCK_N", "BLOCK_H", "num_warps")}

    def upstream_sum() -> Call:
        partials = torch.randn(locks, h, device=device), torch.randn(locks, h, device=device)
        final = torch.empty(h, device=device), torch.empty(h, device=device)
        return lambda: up._group_norm_bwd_dwdb[(h,)](*partials, *final, locks), final

    def port_sum(rows: int) -> Call:
        partials = torch.randn(rows, h, device=device), torch.randn(rows, h, device=device)
        final = torch.empty(h, device=device), torch.empty(h, device=device)
        grid = (triton.cdiv(h, config["BLOCK_H"]),)
        kernel = port._group_norm_bwd_dwdb_kernel[grid]
        return lambda: kernel(*partials, *final, rows, h, **options), final

    counts = {min(CAP, blocks), *(min(k * wave(dx_warps, sms), blocks) for k in waves)}
    return {"upstream_dw": upstream_sum()} | {f"port_dw_{r}": port_sum(r) for r in sorted(counts)}


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
    for case in get_op(OP).cases("performance"):
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
