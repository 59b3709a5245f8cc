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
from recsys_kernel_calls import CAP, BroadcastAddFwd, GroupNormDx

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op


def group_norm_calls(case, device, soc: str) -> dict[str, Call]:
    """group_norm_mul_dropout bwd_dx: upstream's `_group_norm_mul_dropout_bwd_dx_du` against the
    port's row kernel."""
    g = GroupNormDx(case, device)
    default = get_op(g.op).kernel("bwd_dx").default(case)
    frozen = frozen_config(g.op, soc, "bwd_dx", case.name) or default
    block_n, frozen_warps = frozen["BLOCK_N"], frozen["num_warps"]
    blocks = triton.cdiv(g.n, block_n)
    return {
        "upstream": g.upstream(),
        "port": g.port_dx(block_n, frozen_warps, min(frozen["NUM_PROGRAMS"], blocks)),
        "port_uncapped": g.port_dx(block_n, frozen_warps, blocks),
        "port_upstream_launch": g.port_dx(1, g.warps, min(CAP, g.n)),
        "port_upstream_launch_uncapped": g.port_dx(1, g.warps, g.n),
    }


def broadcast_add_calls(case, device, soc: str) -> dict[str, Call]:
    """jagged_dense_broadcast_add fwd: upstream's `jagged_dense_broadcast_add_kernel` at its
    autotuner's pick, raw, against the port's `_jagged_dense_add_kernel`."""
    f = BroadcastAddFwd(case, device)
    kernel = f.port._jagged_dense_add_kernel
    default = get_op(f.op).kernel("fwd").default(case)
    frozen = frozen_config(f.op, soc, "fwd", case.name) or default
    return {
        "upstream": f.upstream(),
        "port": f.launch(kernel, frozen),
        "port_uncapped": f.launch(kernel, frozen, capped=False),
        "port_upstream_launch": f.launch(kernel, f.picked),
        "port_upstream_launch_uncapped": f.launch(kernel, f.picked, capped=False),
    }


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
