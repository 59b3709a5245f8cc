"""A/B of jagged_dense_bmm_broadcast_add's jagged x dense kernel on a GPU: the port's kernel,
variants of it and upstream's raw kernel (its `triton.autotune` bypassed), at the same config,
interleaved (40 rounds of 10 calls each, per-call ms; median, p20-p80, ratio to upstream), with
every variant's output compared bit for bit with the port's first.

Each performance case at upstream's pick (its autotuner run once) and the port's frozen H200
config. Variants: `v1_scalar_base` (the sequence's int64 start in the base pointer, int32 tile
offsets), `v2_one_tile` (one tile per program, no loops but K: upstream's structure, rows past
max_seq_len not computed), `v3_one_tile_mloop` (one tile per program, the loop over row blocks
past max_seq_len kept), `v4_one_tile_straight_then_loop` (the first row block straight, the
later ones in a loop); `v1_increment` for the jagged x jagged kernel.

It ran on the tree b8ceddb, whose port walked the tiles in a loop (at most 32768 programs): that
is the `port` column of docs/runs/2026-12-02_issue29_H200_b8ceddb_bmm_tile_loop_ab.txt. Since
then the port has v3's form (one tile per program up to 32768 tiles, on upstream's 3-D grid since
issue 29's last change), so `port` now times that.

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/bmm_tile_loop_ab.py
"""

import json

import torch
import triton
import triton.language as tl

from ops import all_ops
from ops.ports import load_port


@triton.jit
def v1_add(
    offsets_ptr,
    a_ptr,
    b_ptr,
    bias_ptr,
    c_ptr,
    max_seq_len,
    batch,
    N,
    K,
    num_programs,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_biasb,
    stride_cm,
    stride_cn,
    PRECISION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_m = tl.cdiv(max_seq_len, BLOCK_M)
    per_seq = tiles_m * tiles_n
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    for tile in range(pid, batch * per_seq, num_programs):
        seq = tile // per_seq
        tile_m = (tile % per_seq) // tiles_n
        cols = (tile % tiles_n) * BLOCK_N + offs_n
        mask_n = cols < N
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        a_seq = a_ptr + begin * stride_am
        c_seq = c_ptr + begin * stride_cm
        b_cols = b_ptr + seq.to(tl.int64) * stride_bb + cols[None, :] * stride_bn
        for start_m in range(tile_m * BLOCK_M, seqlen, tiles_m * BLOCK_M):
            rows = start_m + offs_m
            mask_m = rows < seqlen
            a_tile = a_seq + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
            b_tile = b_cols + offs_k[:, None] * stride_bk
            acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            for start_k in range(0, K, BLOCK_K):
                mask_k = offs_k < K - start_k
                a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
                b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
                acc += tl.dot(a, b, input_precision=PRECISION)
                a_tile += BLOCK_K * stride_ak
                b_tile += BLOCK_K * stride_bk
            if HAS_BIAS:
                bias_row = bias_ptr + seq.to(tl.int64) * stride_biasb + cols
                acc += tl.load(bias_row, mask=mask_n, other=0.0).to(tl.float32)[None, :]
            tl.store(
                c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
                acc.to(c_ptr.dtype.element_ty),
                mask=mask_m[:, None] & mask_n[None, :],
            )


@triton.jit
def v2_add(
    offsets_ptr,
    a_ptr,
    b_ptr,
    bias_ptr,
    c_ptr,
    max_seq_len,
    batch,
    N,
    K,
    num_programs,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_biasb,
    stride_cm,
    stride_cn,
    PRECISION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """v1 with the K mask only where K is not a multiple of BLOCK_K... no: v1 plus a single
    tile per program path (no tile loop) when num_programs covers every tile."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_m = tl.cdiv(max_seq_len, BLOCK_M)
    per_seq = tiles_m * tiles_n
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    tile = pid
    seq = tile // per_seq
    tile_m = (tile % per_seq) // tiles_n
    cols = (tile % tiles_n) * BLOCK_N + offs_n
    mask_n = cols < N
    begin = tl.load(offsets_ptr + seq).to(tl.int64)
    seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
    start_m = tile_m * BLOCK_M
    if start_m >= seqlen:
        return
    a_seq = a_ptr + begin * stride_am
    c_seq = c_ptr + begin * stride_cm
    b_cols = b_ptr + seq.to(tl.int64) * stride_bb + cols[None, :] * stride_bn
    rows = start_m + offs_m
    mask_m = rows < seqlen
    a_tile = a_seq + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_tile = b_cols + offs_k[:, None] * stride_bk
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start_k in range(0, K, BLOCK_K):
        mask_k = offs_k < K - start_k
        a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    if HAS_BIAS:
        bias_row = bias_ptr + seq.to(tl.int64) * stride_biasb + cols
        acc += tl.load(bias_row, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    tl.store(
        c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=mask_m[:, None] & mask_n[None, :],
    )


@triton.jit
def v3_add(
    offsets_ptr,
    a_ptr,
    b_ptr,
    bias_ptr,
    c_ptr,
    max_seq_len,
    batch,
    N,
    K,
    num_programs,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_biasb,
    stride_cm,
    stride_cn,
    PRECISION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One tile per program, the M loop kept (rows past max_seq_len)."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_m = tl.cdiv(max_seq_len, BLOCK_M)
    per_seq = tiles_m * tiles_n
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    tile = pid
    seq = tile // per_seq
    tile_m = (tile % per_seq) // tiles_n
    cols = (tile % tiles_n) * BLOCK_N + offs_n
    mask_n = cols < N
    begin = tl.load(offsets_ptr + seq).to(tl.int64)
    seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
    a_seq = a_ptr + begin * stride_am
    c_seq = c_ptr + begin * stride_cm
    b_cols = b_ptr + seq.to(tl.int64) * stride_bb + cols[None, :] * stride_bn
    for start_m in range(tile_m * BLOCK_M, seqlen, tiles_m * BLOCK_M):
        rows = start_m + offs_m
        mask_m = rows < seqlen
        a_tile = a_seq + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
        b_tile = b_cols + offs_k[:, None] * stride_bk
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start_k in range(0, K, BLOCK_K):
            mask_k = offs_k < K - start_k
            a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
            b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
            acc += tl.dot(a, b, input_precision=PRECISION)
            a_tile += BLOCK_K * stride_ak
            b_tile += BLOCK_K * stride_bk
        if HAS_BIAS:
            bias_row = bias_ptr + seq.to(tl.int64) * stride_biasb + cols
            acc += tl.load(bias_row, mask=mask_n, other=0.0).to(tl.float32)[None, :]
        tl.store(
            c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
            acc.to(c_ptr.dtype.element_ty),
            mask=mask_m[:, None] & mask_n[None, :],
        )


@triton.jit
def _rows_block(
    a_seq,
    b_cols,
    bias_row,
    c_seq,
    rows,
    seqlen,
    cols,
    mask_n,
    K,
    stride_am,
    stride_ak,
    stride_bk,
    stride_cm,
    stride_cn,
    PRECISION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = rows < seqlen
    a_tile = a_seq + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_tile = b_cols + offs_k[:, None] * stride_bk
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start_k in range(0, K, BLOCK_K):
        mask_k = offs_k < K - start_k
        a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    if HAS_BIAS:
        acc += tl.load(bias_row, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    tl.store(
        c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
        acc.to(c_seq.dtype.element_ty),
        mask=mask_m[:, None] & mask_n[None, :],
    )


@triton.jit
def v4_add(
    offsets_ptr,
    a_ptr,
    b_ptr,
    bias_ptr,
    c_ptr,
    max_seq_len,
    batch,
    N,
    K,
    num_programs,
    stride_am,
    stride_ak,
    stride_bb,
    stride_bk,
    stride_bn,
    stride_biasb,
    stride_cm,
    stride_cn,
    PRECISION: tl.constexpr,
    HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    """One tile per program: the first row block straight, further ones (past max_seq_len) in a loop."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(N, BLOCK_N)
    tiles_m = tl.cdiv(max_seq_len, BLOCK_M)
    per_seq = tiles_m * tiles_n
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    tile = pid
    seq = tile // per_seq
    tile_m = (tile % per_seq) // tiles_n
    cols = (tile % tiles_n) * BLOCK_N + offs_n
    mask_n = cols < N
    begin = tl.load(offsets_ptr + seq).to(tl.int64)
    seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
    start_m = tile_m * BLOCK_M
    if start_m < seqlen:
        a_seq = a_ptr + begin * stride_am
        c_seq = c_ptr + begin * stride_cm
        b_cols = b_ptr + seq.to(tl.int64) * stride_bb + cols[None, :] * stride_bn
        bias_row = bias_ptr + seq.to(tl.int64) * stride_biasb + cols
        _rows_block(
            a_seq,
            b_cols,
            bias_row,
            c_seq,
            start_m + offs_m,
            seqlen,
            cols,
            mask_n,
            K,
            stride_am,
            stride_ak,
            stride_bk,
            stride_cm,
            stride_cn,
            PRECISION,
            HAS_BIAS,
            BLOCK_M,
            BLOCK_N,
            BLOCK_K,
        )
        for later in range(start_m + tiles_m * BLOCK_M, seqlen, tiles_m * BLOCK_M):
            _rows_block(
                a_seq,
                b_cols,
                bias_row,
                c_seq,
                later + offs_m,
                seqlen,
                cols,
                mask_n,
                K,
                stride_am,
                stride_ak,
                stride_bk,
                stride_cm,
                stride_cn,
                PRECISION,
                HAS_BIAS,
                BLOCK_M,
                BLOCK_N,
                BLOCK_K,
            )


@triton.jit
def v1_reduce(
    offsets_ptr,
    a_ptr,
    b_ptr,
    c_ptr,
    r_ptr,
    batch,
    M,
    N,
    num_programs,
    stride_ak,
    stride_am,
    stride_bk,
    stride_bn,
    stride_cb,
    stride_cm,
    stride_cn,
    stride_rb,
    PRECISION: tl.constexpr,
    REDUCE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    pid = tl.program_id(0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    offs_m = tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    for tile in range(pid, batch * tiles_m * tiles_n, num_programs):
        seq = tile % batch
        tile_m = (tile // batch) % tiles_m
        cols_m = tile_m * BLOCK_M + offs_m
        cols_n = (tile // (batch * tiles_m)) * BLOCK_N + offs_n
        mask_m = cols_m < M
        mask_n = cols_n < N
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        a_tile = (
            a_ptr + begin * stride_ak + offs_k[None, :] * stride_ak + cols_m[:, None] * stride_am
        )
        b_tile = (
            b_ptr + begin * stride_bk + offs_k[:, None] * stride_bk + cols_n[None, :] * stride_bn
        )
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        total = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, seqlen, BLOCK_K):
            mask_k = offs_k < seqlen - start
            a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
            b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
            acc += tl.dot(a, b, input_precision=PRECISION)
            if REDUCE:  # noqa: SIM102 (a constexpr, then a run-time test)
                if tile_m == 0:
                    total += tl.sum(b.to(tl.float32), axis=0)
            a_tile += BLOCK_K * stride_ak
            b_tile += BLOCK_K * stride_bk
        out = c_ptr + seq.to(tl.int64) * stride_cb
        out += cols_m[:, None] * stride_cm + cols_n[None, :] * stride_cn
        tl.store(out, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])
        if REDUCE:  # noqa: SIM102
            if tile_m == 0:
                reduced = r_ptr + seq.to(tl.int64) * stride_rb + cols_n
                tl.store(reduced, total.to(r_ptr.dtype.element_ty), mask=mask_n)


def timed(fns, rounds=40, reps=10):
    """Interleaved: each round times `reps` calls of every fn; per fn the per-call ms of each round."""
    out = {k: [] for k in fns}
    for f in fns.values():
        f()
    torch.cuda.synchronize()
    for _ in range(rounds):
        for k, f in fns.items():
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(reps):
                f()
            e.record()
            e.synchronize()
            out[k].append(s.elapsed_time(e) / reps)
    return out


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def run_case(spec, port, up, frozen, case, dev):
    """Every config of one case: its variants interleaved, one printed line per config."""
    inp = spec.make_inputs(case, dev)
    x, y, bias, offsets, dout = (inp[k] for k in ("x", "y", "bias", "offsets", "dout"))
    msl = int(inp["max_seq_len"])
    B, D, T = y.shape
    # upstream's pick: run its autotuned forward once
    spec.upstream_part("fwd", inp, case)()
    ak = up.jagged_dense_bmm_broadcast_add_kernel
    rk = up._jagged_jagged_bmm_reduce_sum
    picks = {"fwd": ak.best_config}
    bwd_up = spec.upstream_part("bwd", inp, case)
    bwd_up()
    picks["bwd_dy_db"] = rk.best_config
    configs = {}
    for name, c in picks.items():
        configs[f"up:{name}"] = {
            **c.kwargs,
            "num_warps": c.num_warps,
            "num_stages": c.num_stages,
        }
    print(case.name, "upstream picks", configs, flush=True)
    c_out = torch.empty(x.size(0), T, dtype=x.dtype, device=dev)

    def add_launcher(kern, cfg, one_tile=False):
        blocks = {k: v for k, v in cfg.items() if k.startswith("BLOCK_")}
        tiles = triton.cdiv(msl, blocks["BLOCK_M"]) * triton.cdiv(T, blocks["BLOCK_N"]) * B
        programs = tiles if one_tile else min(tiles, 32768)
        if "PERSISTENT" in kern.arg_names:  # the port since b8ceddb
            blocks["PERSISTENT"] = programs < tiles

        def f():
            kern[(programs,)](
                offsets,
                x,
                y,
                bias,
                c_out,
                msl,
                B,
                T,
                D,
                programs,
                x.stride(0),
                x.stride(1),
                y.stride(0),
                y.stride(1),
                y.stride(2),
                bias.stride(0),
                c_out.stride(0),
                c_out.stride(1),
                PRECISION="ieee",
                HAS_BIAS=True,
                **blocks,
                num_warps=cfg["num_warps"],
                num_stages=cfg["num_stages"],
            )

        return f

    def up_add(cfg):
        blocks = {k: v for k, v in cfg.items() if k.startswith("BLOCK_")}
        grid = (triton.cdiv(T, blocks["BLOCK_N"]), triton.cdiv(msl, blocks["BLOCK_M"]), B)

        def f():
            ak.fn[grid](
                offsets,
                x,
                y,
                bias,
                c_out,
                msl,
                T,
                D,
                x.stride(0),
                y.stride(0),
                y.stride(1),
                y.stride(2),
                bias.stride(0),
                c_out.stride(0),
                HAS_BIAS=True,
                ALLOW_TF32=False,
                **blocks,
                num_warps=cfg["num_warps"],
                num_stages=cfg["num_stages"],
            )

        return f

    dy = torch.empty(B, D, T, dtype=x.dtype, device=dev)
    db = torch.empty(B, T, dtype=x.dtype, device=dev)

    def red_launcher(kern, cfg):
        blocks = {k: v for k, v in cfg.items() if k.startswith("BLOCK_")}
        tiles = B * triton.cdiv(D, blocks["BLOCK_M"]) * triton.cdiv(T, blocks["BLOCK_N"])
        programs = min(tiles, 32768)

        def f():
            kern[(programs,)](
                offsets,
                x,
                dout,
                dy,
                db,
                B,
                D,
                T,
                programs,
                x.stride(0),
                x.stride(1),
                dout.stride(0),
                dout.stride(1),
                dy.stride(0),
                dy.stride(1),
                dy.stride(2),
                db.stride(0),
                PRECISION="ieee",
                REDUCE=True,
                **blocks,
                num_warps=cfg["num_warps"],
                num_stages=cfg["num_stages"],
            )

        return f

    def up_red(cfg):
        blocks = {k: v for k, v in cfg.items() if k.startswith("BLOCK_")}
        grid = (B, triton.cdiv(D, blocks["BLOCK_M"]), triton.cdiv(T, blocks["BLOCK_N"]))

        def f():
            rk.fn[grid](
                offsets,
                x,
                dout,
                dy,
                db,
                D,
                T,
                msl,
                x.stride(0),
                dout.stride(0),
                dy.stride(0),
                dy.stride(1),
                dy.stride(2),
                db.stride(0),
                db.stride(1),
                REDUCE_JAGGEDB=True,
                ALLOW_TF32=False,
                **blocks,
                num_warps=cfg["num_warps"],
                num_stages=cfg["num_stages"],
            )

        return f

    fz = {
        k: next((e["config"] for e in es if e["case"] == case.name), None)
        for k, es in frozen["frozen"].items()
    }
    sets = {"fwd@up": configs["up:fwd"]}
    for kernel in ("fwd", "bwd_dy_db"):
        f = fz.get(kernel)
        if f:
            sets[f"{kernel}@frozen"] = f
    sets["bwd_dy_db@up"] = configs["up:bwd_dy_db"]
    seen = []
    for label, cfg in sets.items():
        if (label.split("@")[0], cfg) in seen:
            continue
        seen.append((label.split("@")[0], cfg))
        if label.startswith("fwd"):
            fns = {
                "upstream": up_add(cfg),
                "port": add_launcher(port._jagged_dense_bmm_add_kernel, cfg),
                "v1_scalar_base": add_launcher(v1_add, cfg),
                "v2_one_tile": add_launcher(v2_add, cfg, one_tile=True),
                "v3_one_tile_mloop": add_launcher(v3_add, cfg, one_tile=True),
                "v4_one_tile_straight_then_loop": add_launcher(v4_add, cfg, one_tile=True),
            }
        else:
            fns = {
                "upstream": up_red(cfg),
                "port": red_launcher(port._jagged_bmm_reduce_kernel, cfg),
                "v1_increment": red_launcher(v1_reduce, cfg),
            }
        outs = {}
        for k, f in fns.items():
            c_out.fill_(7)
            dy.fill_(7)
            db.fill_(7)
            f()
            torch.cuda.synchronize()
            outs[k] = (c_out.clone(), dy.clone(), db.clone())
        same = {
            k: all(torch.equal(a, b) for a, b in zip(o, outs["port"], strict=True))
            for k, o in outs.items()
        }
        t = timed(fns)
        ref = q(t["upstream"], 0.5)
        row = "  ".join(
            f"{k} {q(v, 0.5):.4f} ({q(v, 0.2):.4f}-{q(v, 0.8):.4f}) x{q(v, 0.5) / ref:.3f}"
            for k, v in t.items()
        )
        print(f"{case.name} {label} {cfg} n=40x10: {row} same-as-port {same}", flush=True)


def main():
    spec = all_ops()["jagged_dense_bmm_broadcast_add"]
    port = load_port(spec.name)
    up = spec.upstream.load()
    with open("frozen_configs/H200/jagged_dense_bmm_broadcast_add.json") as f:
        frozen = json.load(f)
    dev = torch.device("cuda")
    for case in spec.cases("performance"):
        run_case(spec, port, up, frozen, case, dev)


if __name__ == "__main__":
    main()
