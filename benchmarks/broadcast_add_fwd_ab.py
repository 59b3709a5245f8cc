"""A/B on a GPU of jagged_dense_broadcast_add's forward, the part still 0.8% slower than upstream
(fp32 b256_n4096_d128, 1.008 in c1's baseline at b4c2720): which of the port kernel's differences from
upstream's costs it?

The port's `_jagged_dense_add_kernel` differs from upstream's `jagged_dense_broadcast_add_kernel`
in three ways besides its program loop (needed: an Ascend launch takes at most 65535 blocks):
it addresses every row as (sequence start + row) * stride in int64 where upstream adds the
sequence's start to the pointer once and indexes the rows in int32; its loads give masked lanes
`other=0.0` and it computes in fp32 (upstream: no `other`, the input dtype); and it computes the
rows past max_seq_len. `variant` is the port's kernel with the first two as switches
(`SEQ_BASE`: a sequence's base pointer once, rows in int32; `PLAIN`: upstream's loads and
dtype), run at the port's frozen config and at the config upstream's autotuner picks, capped as
the port launches. Each is timed interleaved with the port at its frozen config (`port`) and
upstream's raw kernel (`interleaved_ab.ab_line`, outputs compared bit for bit).

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/broadcast_add_fwd_ab.py \\
        --soc H200 --case b256_n4096_d128_fp32
"""

from __future__ import annotations

import argparse

import torch
import triton
import triton.language as tl
from interleaved_ab import Call, ab_line
from recsys_kernel_calls import BroadcastAddFwd

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op

OP = BroadcastAddFwd.op


@triton.jit
def _variant_kernel(
    offsets_ptr, x_ptr, y_ptr, out_ptr, max_seq_len, batch, total_rows, D, num_programs,
    search_steps, stride_xn, stride_yb, stride_on, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    BY_ROWS: tl.constexpr, SEQ_BASE: tl.constexpr, PLAIN: tl.constexpr,
):  # fmt: skip
    """The port's kernel over upstream's grid (its form at 111eaf0, where this A/B ran; the
    port's signature since 59fee74, whose row-block form, total_rows, search_steps and BY_ROWS,
    the variants do not take) with the two switches of the module's docstring."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(max_seq_len, BLOCK_N)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, batch * tiles_n, num_programs):
        seq = tile % batch
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        y_row = y_ptr + seq.to(tl.int64) * stride_yb
        x_seq, out_seq = x_ptr + begin * stride_xn, out_ptr + begin * stride_on
        for start in range((tile // batch) * BLOCK_N, seqlen, tiles_n * BLOCK_N):
            rows = start + offs_n
            mask_n = rows < seqlen
            if SEQ_BASE:
                x_rows = x_seq + rows[:, None] * stride_xn
                out_rows = out_seq + rows[:, None] * stride_on
            else:
                x_rows = x_ptr + (begin + rows)[:, None] * stride_xn
                out_rows = out_ptr + (begin + rows)[:, None] * stride_on
            for first in range(0, D, BLOCK_D):
                cols = first + offs_d
                mask_d = cols < D
                mask = mask_n[:, None] & mask_d[None, :]
                if PLAIN:
                    x = tl.load(x_rows + cols[None, :], mask=mask)
                    y = tl.load(y_row + cols, mask=mask_d)
                    tl.store(out_rows + cols[None, :], x + y[None, :], mask=mask)
                else:
                    x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
                    y = tl.load(y_row + cols, mask=mask_d, other=0.0).to(tl.float32)
                    out = (x + y[None, :]).to(out_ptr.dtype.element_ty)
                    tl.store(out_rows + cols[None, :], out, mask=mask)


def calls(case, device, soc: str) -> dict[str, Call]:
    f = BroadcastAddFwd(case, device)
    port = f.port._jagged_dense_add_kernel
    frozen = frozen_config(OP, soc, "fwd", case.name) or get_op(OP).kernel("fwd").default(case)
    fns = {
        "upstream": f.upstream(),
        "port": f.launch(port, frozen),
        "port_at_pick": f.launch(port, f.picked),
    }
    for at, config in (("", frozen), ("_at_pick", f.picked)):
        for seq_base, plain in ((False, False), (True, False), (False, True), (True, True)):
            fns[f"seq_base{int(seq_base)}_plain{int(plain)}{at}"] = f.launch(
                _variant_kernel, config, SEQ_BASE=seq_base, PLAIN=plain
            )
    return fns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument("--case", action="append", help="a performance case (default: all)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reps", type=int, default=10)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("broadcast_add_fwd_ab.py times kernels: it needs a GPU soc")
    print(f"# {backend.describe()}, versions {backend.versions()}")
    for case in get_op(OP).cases("performance"):
        if args.case and case.name not in args.case:
            continue
        fns = calls(case, backend.device, args.soc)
        print(f"{OP} {case.name}: {ab_line(backend, fns, args.rounds, args.reps)}", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
