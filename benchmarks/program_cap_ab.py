"""A/B on a GPU of the two parts still slower than upstream (2026-12-03): is it the ports' cap of
32768 programs a launch, or their kernels?

Both ports launch at most 32768 programs (an Ascend launch takes at most 65535 blocks) and walk
the rest in a loop, where upstream launches one program per block: group_norm_mul_dropout's
bwd_dx (upstream: one row a program, grid (N,), N up to 2^20) and jagged_dense_broadcast_add's
forward (upstream: grid (B, cdiv(max_seq_len, BLOCK_N)), 65536 blocks on b256_n4096 at
BLOCK_N 16). Per performance case, interleaved, the kernels alone (no allocation, no fill in the
timed call): upstream's raw kernel at its launch (for the broadcast add, at the config its
`triton.autotune` picks); the port at its frozen config, capped as it runs (`port`); the port
at that config with one program per block (`port_uncapped`); and the port at upstream's launch,
capped and uncapped, each against `port` (`interleaved_ab.ab_line`).

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/program_cap_ab.py --soc H200
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

CAP = 32768


def group_norm_calls(case, device, soc: str) -> dict[str, Call]:
    """group_norm_mul_dropout bwd_dx: upstream's `_group_norm_mul_dropout_bwd_dx_du` (its lock
    rows zeroed once, outside the timed calls) against the port's row kernel."""
    op = "group_norm_mul_dropout"
    spec, port, up = get_op(op), load_port(op), get_op(op).upstream.load()
    given = spec.make_inputs(case, device)
    x, u, w, b, dy = (given[k] for k in ("x", "u", "weight", "bias", "dy"))
    n, h, d = case.shape["N"], case.shape["H"], case.shape["D"]
    ratio, training, seed = spec.dropout_ratio, spec.training, spec.seed
    _, mean, rstd = port.group_norm_mul_dropout_fwd(x, u, w, b, spec.eps, ratio, training, seed)
    bh, bd = triton.next_power_of_2(h), triton.next_power_of_2(d)
    warps = min(max(bh * bd // 256, 1), 8)  # upstream's
    locks = min(n, 2048 if h * d <= 1024 else 1024)
    dw_locks, db_locks = (torch.zeros(locks, h, dtype=torch.float32, device=device) for _ in "wb")
    outs = {}

    def buffers(name):
        outs[name] = (torch.empty_like(x), torch.empty_like(u))
        return outs[name]

    def upstream():
        dx, du = buffers("upstream")
        return lambda: up._group_norm_mul_dropout_bwd_dx_du[(n,)](
            dx, du, dy, dw_locks, db_locks, x, u, None, w, b, mean, rstd, dx.stride(0),
            du.stride(0), dy.stride(0), x.stride(0), u.stride(0), 0, d, h, spec.eps, seed, ratio,
            GROUP_N=locks, BLOCK_D=bd, BLOCK_H=bh, TRAINING=training, CONCAT_UX=False,
            COMPUTE_Y=False, num_warps=warps,
        )  # fmt: skip

    def ported(name, block_n, num_warps, programs):
        dx, du = buffers(name)
        dw, db = (torch.empty(programs, h, dtype=torch.float32, device=device) for _ in "wb")
        return lambda: port._group_norm_mul_dropout_bwd_dx_du_kernel[(programs,)](
            dx, du, dy, x, u, w, b, mean, rstd, dw, db, n, h, d,
            seed, ratio, dx.stride(0), du.stride(0), dy.stride(0), x.stride(0), u.stride(0),
            BLOCK_N=block_n, BLOCK_H=bh, BLOCK_D=bd, TRAINING=training, num_warps=num_warps,
        )  # fmt: skip

    frozen = frozen_config(op, soc, "bwd_dx", case.name) or spec.kernel("bwd_dx").default(case)
    block_n, frozen_warps = frozen["BLOCK_N"], frozen["num_warps"]
    blocks = triton.cdiv(n, block_n)
    fns = {
        "upstream": upstream(),
        "port": ported("port", block_n, frozen_warps, min(frozen["NUM_PROGRAMS"], blocks)),
        "port_uncapped": ported("port_uncapped", block_n, frozen_warps, blocks),
        "port_upstream_launch": ported("port_upstream_launch", 1, warps, min(CAP, n)),
        "port_upstream_launch_uncapped": ported("port_upstream_launch_uncapped", 1, warps, n),
    }
    return {name: (fn, outs[name]) for name, fn in fns.items()}


def broadcast_add_calls(case, device, soc: str) -> dict[str, Call]:
    """jagged_dense_broadcast_add fwd: upstream's `jagged_dense_broadcast_add_kernel` at its
    autotuner's pick, raw, against the port's `_jagged_dense_add_kernel`."""
    op = "jagged_dense_broadcast_add"
    spec, port, up = get_op(op), load_port(op), get_op(op).upstream.load()
    given = spec.make_inputs(case, device)
    x, y, offsets = given["x"], given["y"], given["offsets"]
    msl = int(given["max_seq_len"])
    batch, d = y.shape
    block_d = triton.next_power_of_2(d) if d < 64 else 64  # upstream's
    tuned = up.jagged_dense_broadcast_add_kernel
    tuned[lambda meta: (batch, triton.cdiv(msl, meta["BLOCK_N"]))](
        seq_offsets=offsets, Jagged=x, Dense=y, Out=torch.empty_like(x),
        AUTOTUNE_MAX_SEQ_LEN=up.autotune_max_seq_len(msl), D=d, stride_jn=x.stride(0),
        stride_db=y.stride(0), stride_on=x.stride(0), BLOCK_D=block_d,
    )  # fmt: skip
    pick = tuned.best_config
    print(f"{case.name}: upstream's autotune picks {pick}", flush=True)
    outs = {}

    def upstream():
        out = outs.setdefault("upstream", (torch.empty_like(x),))[0]
        grid = (batch, triton.cdiv(msl, pick.kwargs["BLOCK_N"]))
        return lambda: tuned.fn[grid](
            offsets, x, y, out, msl, d, x.stride(0), y.stride(0), out.stride(0), BLOCK_D=block_d,
            num_warps=pick.num_warps, num_stages=pick.num_stages, **pick.kwargs,
        )  # fmt: skip

    def ported(name, config, capped):
        out = outs.setdefault(name, (torch.empty_like(x),))[0]
        tiles = batch * triton.cdiv(msl, config["BLOCK_N"])
        programs = min(tiles, CAP) if capped else tiles
        return lambda: port._jagged_dense_add_kernel[(programs,)](
            offsets, x, y, out, msl, batch, d, programs, x.stride(0), y.stride(0), out.stride(0),
            BLOCK_N=config["BLOCK_N"], BLOCK_D=config["BLOCK_D"], num_warps=config["num_warps"],
            num_stages=config["num_stages"],
        )  # fmt: skip

    frozen = frozen_config(op, soc, "fwd", case.name) or spec.kernel("fwd").default(case)
    upstream_config = {
        **pick.kwargs, "BLOCK_D": block_d, "num_warps": pick.num_warps,
        "num_stages": pick.num_stages,
    }  # fmt: skip
    fns = {
        "upstream": upstream(),
        "port": ported("port", frozen, True),
        "port_uncapped": ported("port_uncapped", frozen, False),
        "port_upstream_launch": ported("port_upstream_launch", upstream_config, True),
        "port_upstream_launch_uncapped": ported(
            "port_upstream_launch_uncapped", upstream_config, False
        ),
    }
    return {name: (fn, outs[name]) for name, fn in fns.items()}


OPS = {
    "group_norm_mul_dropout": group_norm_calls,
    "jagged_dense_broadcast_add": broadcast_add_calls,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument("--op", action="append", choices=sorted(OPS), help="default: both")
    parser.add_argument("--case", action="append", help="a performance case (default: all)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("program_cap_ab.py times kernels: it needs a GPU soc, not the interpreter")
    print(f"# {backend.describe()}, versions {backend.versions()}")
    for op in args.op or sorted(OPS):
        for case in get_op(op).cases("performance"):
            if args.case and case.name not in args.case:
                continue
            fns = OPS[op](case, backend.device, args.soc)
            print(f"{op} {case.name}: {ab_line(backend, fns, args.rounds, args.reps)}", flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
