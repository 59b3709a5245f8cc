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

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op
from ops.ports import load_port

OP = "jagged_dense_broadcast_add"
CAP = 32768


@triton.jit
def _variant_kernel(
    offsets_ptr, x_ptr, y_ptr, out_ptr, max_seq_len, batch, D, num_programs,
    stride_xn, stride_yb, stride_on, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    SEQ_BASE: tl.constexpr, PLAIN: tl.constexpr,
):  # fmt: skip
    """The port's kernel with the two switches of the module's docstring."""
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
    spec, port, up = get_op(OP), load_port(OP), get_op(OP).upstream.load()
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
    outs: dict[str, tuple[torch.Tensor]] = {}

    def upstream():
        out = outs.setdefault("upstream", (torch.empty_like(x),))[0]
        grid = (batch, triton.cdiv(msl, pick.kwargs["BLOCK_N"]))
        return lambda: tuned.fn[grid](
            offsets, x, y, out, msl, d, x.stride(0), y.stride(0), out.stride(0), BLOCK_D=block_d,
            num_warps=pick.num_warps, num_stages=pick.num_stages, **pick.kwargs,
        )  # fmt: skip

    def launch(name, kernel, config, **switches):
        out = outs.setdefault(name, (torch.empty_like(x),))[0]
        programs = min(batch * triton.cdiv(msl, config["BLOCK_N"]), CAP)
        return lambda: kernel[(programs,)](
            offsets, x, y, out, msl, batch, d, programs, x.stride(0), y.stride(0), out.stride(0),
            BLOCK_N=config["BLOCK_N"], BLOCK_D=config["BLOCK_D"], num_warps=config["num_warps"],
            num_stages=config["num_stages"], **switches,
        )  # fmt: skip

    frozen = frozen_config(OP, soc, "fwd", case.name) or spec.kernel("fwd").default(case)
    picked = {
        **pick.kwargs, "BLOCK_D": block_d, "num_warps": pick.num_warps,
        "num_stages": pick.num_stages,
    }  # fmt: skip
    fns = {
        "upstream": upstream(),
        "port": launch("port", port._jagged_dense_add_kernel, frozen),
        "port_at_pick": launch("port_at_pick", port._jagged_dense_add_kernel, picked),
    }
    for at, config in (("", frozen), ("_at_pick", picked)):
        for seq_base, plain in ((False, False), (True, False), (False, True), (True, True)):
            name = f"seq_base{int(seq_base)}_plain{int(plain)}{at}"
            fns[name] = launch(name, _variant_kernel, config, SEQ_BASE=seq_base, PLAIN=plain)
    return {name: (fn, outs[name]) for name, fn in fns.items()}


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
