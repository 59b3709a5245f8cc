# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton jagged_dense_bmm_broadcast_add (NVIDIA/recsys-examples,
# examples/commons/ops/triton_ops/triton_jagged.py, see README.md), written here:
# out[rows of b] = x[rows of b] @ y[b] + bias[b]. The backward runs the same two kernels as
# upstream's autograd Function: dx = dout @ y^T (the jagged x dense kernel without bias) and
# dy = x^T @ dout with dbias = the rows of dout summed (the jagged x jagged kernel's reduce-sum).
# Differences from upstream: upstream's 3-D grid, one tile per program, up to 32768 tiles, beyond
# that a 1-D grid of 32768 programs walking the tiles (an Ascend launch takes at most 65535 blocks);
# every row is computed, also those of a sequence longer than max_seq_len (upstream leaves them
# unwritten), on a CUDA GPU in IEEE fp32 in one loop over a tile's (row block, K block) steps
# (nested loops took more registers there, see _flat); tl.dot's precision "hf32" on an NPU
# where TF32 is allowed; the config passed per launch from the frozen configs below (upstream:
# Triton's autotuner over _get_bmm_configs).
"""Triton port of jagged_dense_bmm_broadcast_add: forward and its backward's two kernels."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch; below it, one tile per program (upstream's grid).
MAX_PROGRAMS = 32768


@triton.jit
def _jagged_dense_bmm_add_kernel(
    offsets_ptr, a_ptr, b_ptr, bias_ptr, c_ptr, max_seq_len, batch, N, K, num_programs,
    stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_biasb, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, PERSISTENT: tl.constexpr,
    FLAT: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[rows of b] = a[rows of b] @ b_dense[b] (+ bias[b]): a [sum_L, K] jagged, b_dense
    [B, K, N], bias [B, N], c [sum_L, N]; fp32 accumulation.

    One tile per program on upstream's 3-D grid (N blocks, row blocks of max_seq_len,
    sequences), or with PERSISTENT (more tiles than one launch takes) a 1-D grid whose programs
    take the tiles pid, pid + num_programs, ... in that order. On the H200 the loop over the
    tiles took 9-37% more than one tile per program at the same config (docs/benchmarks.md).
    An Ascend launch flattens any grid to gridX * gridY * gridZ blocks (triton-ascend v3.2.0
    ascend/backend/driver.py:728-742), so the 3-D grid's limit is the 1-D one's."""
    if PERSISTENT:
        tiles_n = tl.cdiv(N, BLOCK_N)
        per_seq = tl.cdiv(max_seq_len, BLOCK_M) * tiles_n
        for tile in range(tl.program_id(0), batch * per_seq, num_programs):
            _bmm_add_tile(
                tile // per_seq, (tile % per_seq) // tiles_n, tile % tiles_n, offsets_ptr,
                a_ptr, b_ptr, bias_ptr, c_ptr, max_seq_len, N, K,
                stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_biasb, stride_cm,
                stride_cn, PRECISION, HAS_BIAS, FLAT, BLOCK_M, BLOCK_N, BLOCK_K,
            )  # fmt: skip
    else:
        _bmm_add_tile(
            tl.program_id(2), tl.program_id(1), tl.program_id(0), offsets_ptr, a_ptr, b_ptr,
            bias_ptr, c_ptr, max_seq_len, N, K,
            stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_biasb, stride_cm,
            stride_cn, PRECISION, HAS_BIAS, FLAT, BLOCK_M, BLOCK_N, BLOCK_K,
        )  # fmt: skip


@triton.jit
def _bmm_add_tile(
    seq, tile_m, tile_n, offsets_ptr, a_ptr, b_ptr, bias_ptr, c_ptr, max_seq_len, N, K,
    stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_biasb, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, FLAT: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """One tile: its row block of the sequence, then the blocks max_seq_len rows further on of a
    sequence longer than max_seq_len. The sequence's int64 start moves the base pointers, the
    tile's offsets stay int32 (upstream's arithmetic). With FLAT the rows and K blocks are one
    loop (`_bmm_add_steps`), else a K loop per row block (`_bmm_add_rows`); the launcher sets it
    on a CUDA GPU in IEEE fp32 (`_flat`); the nested form runs the tile's own row block as
    upstream does, then `_bmm_add_later_rows`."""
    row_step = tl.cdiv(max_seq_len, BLOCK_M) * BLOCK_M
    start_m = tile_m * BLOCK_M
    col0 = tile_n * BLOCK_N
    begin = tl.load(offsets_ptr + seq).to(tl.int64)
    seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
    if start_m < seqlen:
        a_seq = a_ptr + begin * stride_am
        c_seq = c_ptr + begin * stride_cm
        b_seq = b_ptr + seq.to(tl.int64) * stride_bb
        bias_seq = bias_ptr + seq.to(tl.int64) * stride_biasb
        if FLAT:
            cols = col0 + tl.arange(0, BLOCK_N)
            _bmm_add_steps(
                start_m, row_step, cols, seqlen, N, K, a_seq, b_seq + cols[None, :] * stride_bn,
                bias_seq, c_seq, stride_am, stride_ak, stride_bk, stride_cm, stride_cn,
                PRECISION, HAS_BIAS, BLOCK_M, BLOCK_N, BLOCK_K,
            )  # fmt: skip
        else:
            _bmm_add_rows(
                start_m, col0, seqlen, N, K, a_seq, b_seq, bias_seq, c_seq,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                PRECISION, HAS_BIAS, BLOCK_M, BLOCK_N, BLOCK_K,
            )  # fmt: skip
            _bmm_add_later_rows(
                start_m, row_step, col0, seqlen, N, K, a_seq, b_seq, bias_seq, c_seq,
                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                PRECISION, HAS_BIAS, BLOCK_M, BLOCK_N, BLOCK_K,
            )  # fmt: skip


@triton.jit
def _bmm_add_steps(
    start_m, row_step, cols, seqlen, N, K, a_seq, b_cols, bias_seq, c_seq,
    stride_am, stride_ak, stride_bk, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[rows, cols] = a[rows] @ b[:, cols] (+ bias[cols]) for the row blocks start_m,
    start_m + row_step, ... of one sequence, in one loop over their (row block, K block) steps
    (the persistent matmul of Triton's tutorial 09): a row block's result is stored and the
    accumulator reset at its last K step. The bias row's pointers are made where it is added,
    not held through the loop."""
    mask_n = cols < N
    offs_k = tl.arange(0, BLOCK_K)
    k_steps = tl.maximum(tl.cdiv(K, BLOCK_K), 1)  # K == 0: one step of zeros, then the bias
    steps = tl.cdiv(seqlen - start_m, row_step) * k_steps
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for step in range(0, steps):
        k0 = (step % k_steps) * BLOCK_K
        rows = start_m + (step // k_steps) * row_step + tl.arange(0, BLOCK_M)
        mask_m = rows < seqlen
        mask_k = offs_k < K - k0
        a = tl.load(
            a_seq + rows[:, None] * stride_am + (k0 + offs_k)[None, :] * stride_ak,
            mask=mask_m[:, None] & mask_k[None, :],
            other=0.0,
        )
        b = tl.load(
            b_cols + (k0 + offs_k)[:, None] * stride_bk,
            mask=mask_k[:, None] & mask_n[None, :],
            other=0.0,
        )
        acc += tl.dot(a, b, input_precision=PRECISION)
        if step % k_steps == k_steps - 1:
            if HAS_BIAS:
                bias = tl.load(bias_seq + cols, mask=mask_n, other=0.0)
                acc += bias.to(tl.float32)[None, :]
            tl.store(
                c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
                acc.to(c_seq.dtype.element_ty),
                mask=mask_m[:, None] & mask_n[None, :],
            )
            acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)


@triton.jit
def _bmm_add_rows(
    row0, col0, seqlen, N, K, a_seq, b_seq, bias_seq, c_seq,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[rows, cols] = a[rows] @ b[:, cols] (+ bias[cols]) for the BLOCK_M rows from row0 and
    the BLOCK_N columns from col0 of one sequence, the K loop pipelined."""
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = col0 + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = rows < seqlen
    mask_n = cols < N
    a_tile = a_seq + rows[:, None] * stride_am + offs_k[None, :] * stride_ak
    b_tile = b_seq + offs_k[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start_k in range(0, K, BLOCK_K):
        mask_k = offs_k < K - start_k
        a = tl.load(a_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(b_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    _add_bias_store(
        acc, rows, cols, mask_m, mask_n, bias_seq, c_seq, stride_cm, stride_cn, HAS_BIAS
    )


@triton.jit
def _bmm_add_later_rows(
    start_m, row_step, col0, seqlen, N, K, a_seq, b_seq, bias_seq, c_seq,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """The tile's row blocks max_seq_len rows further on, of a sequence longer than max_seq_len
    (upstream leaves those rows unwritten), in pieces of at most 32 x 32 x 32, every loop
    unpipelined, the operands' pointers made from the K offset rather than carried. A loop over
    the row blocks around the tile's pipelined K loop held some 50 registers more through it:
    252 against upstream's 212 for the H200's fp16 forward at 128/128/64, 4 warps, 3 stages
    (Triton 3.6, sm_90a); with the pieces the kernel is at upstream's count
    (docs/benchmarks.md), and only sequences past upstream's contract pay for them."""
    PIECE_M: tl.constexpr = 32 if BLOCK_M > 32 else BLOCK_M
    PIECE_N: tl.constexpr = 32 if BLOCK_N > 32 else BLOCK_N
    PIECE_K: tl.constexpr = 32 if BLOCK_K > 32 else BLOCK_K
    offs_k = tl.arange(0, PIECE_K)
    for row0 in tl.range(start_m + row_step, seqlen, row_step, num_stages=1):
        for piece_m in tl.range(row0, tl.minimum(row0 + BLOCK_M, seqlen), PIECE_M, num_stages=1):
            rows = piece_m + tl.arange(0, PIECE_M)
            mask_m = rows < seqlen
            for piece_n in tl.range(col0, col0 + BLOCK_N, PIECE_N, num_stages=1):
                cols = piece_n + tl.arange(0, PIECE_N)
                mask_n = cols < N
                acc = tl.zeros([PIECE_M, PIECE_N], dtype=tl.float32)
                for start_k in tl.range(0, K, PIECE_K, num_stages=1):
                    ks = start_k + offs_k
                    a = tl.load(
                        a_seq + rows[:, None] * stride_am + ks[None, :] * stride_ak,
                        mask=mask_m[:, None] & (ks < K)[None, :],
                        other=0.0,
                    )
                    b = tl.load(
                        b_seq + ks[:, None] * stride_bk + cols[None, :] * stride_bn,
                        mask=(ks < K)[:, None] & mask_n[None, :],
                        other=0.0,
                    )
                    acc += tl.dot(a, b, input_precision=PRECISION)
                _add_bias_store(
                    acc, rows, cols, mask_m, mask_n, bias_seq, c_seq, stride_cm, stride_cn,
                    HAS_BIAS,
                )  # fmt: skip


@triton.jit
def _add_bias_store(
    acc, rows, cols, mask_m, mask_n, bias_seq, c_seq, stride_cm, stride_cn,
    HAS_BIAS: tl.constexpr,
):  # fmt: skip
    """c[rows, cols] = acc (+ bias[cols]), in c's dtype."""
    if HAS_BIAS:
        acc += tl.load(bias_seq + cols, mask=mask_n, other=0.0).to(tl.float32)[None, :]
    tl.store(
        c_seq + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
        acc.to(c_seq.dtype.element_ty),
        mask=mask_m[:, None] & mask_n[None, :],
    )


@triton.jit
def _jagged_bmm_reduce_kernel(
    offsets_ptr, a_ptr, b_ptr, c_ptr, r_ptr, batch, M, N, num_programs,
    stride_ak, stride_am, stride_bk, stride_bn, stride_cb, stride_cm, stride_cn, stride_rb,
    PRECISION: tl.constexpr, REDUCE: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[b] = a[rows of b]^T @ b_jagged[rows of b] over every row of sequence b: a [sum_L, M] and
    b_jagged [sum_L, N] jagged, c [B, M, N] (zeros for an empty sequence); with REDUCE also
    r[b] = the rows of b_jagged summed [B, N], by the tiles of the first M block.

    The tiles are upstream's grid in its launch order (sequences, then M blocks, then N blocks)."""
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
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        total = tl.zeros([BLOCK_N], dtype=tl.float32)
        for start in range(0, seqlen, BLOCK_K):
            ks = start + offs_k
            mask_k = ks < seqlen
            rows = begin + ks
            a = tl.load(
                a_ptr + rows[None, :] * stride_ak + cols_m[:, None] * stride_am,
                mask=mask_m[:, None] & mask_k[None, :],
                other=0.0,
            )
            b = tl.load(
                b_ptr + rows[:, None] * stride_bk + cols_n[None, :] * stride_bn,
                mask=mask_k[:, None] & mask_n[None, :],
                other=0.0,
            )
            acc += tl.dot(a, b, input_precision=PRECISION)
            if REDUCE:  # noqa: SIM102 (a constexpr, then a run-time test: two ifs in Triton)
                if tile_m == 0:
                    total += tl.sum(b.to(tl.float32), axis=0)
        out = c_ptr + seq.to(tl.int64) * stride_cb
        out += cols_m[:, None] * stride_cm + cols_n[None, :] * stride_cn
        tl.store(out, acc.to(c_ptr.dtype.element_ty), mask=mask_m[:, None] & mask_n[None, :])
        if REDUCE:  # noqa: SIM102
            if tile_m == 0:
                reduced = r_ptr + seq.to(tl.int64) * stride_rb + cols_n
                tl.store(reduced, total.to(r_ptr.dtype.element_ty), mask=mask_n)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd_dx": [
            {
                "case": "b1024_n512_d256_t512_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 512},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 8,
                    "num_stages": 3,
                },
            },
            {
                "case": "b2048_n1024_d256_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 1024, "D": 256, "T": 128},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 8,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 256},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 16,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n1024_d256_t256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "T": 256},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 8,
                    "num_stages": 3,
                },
            },
        ],
        "bwd_dy_db": [
            {
                "case": "b1024_n512_d256_t512_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 512},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b2048_n1024_d256_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 1024, "D": 256, "T": 128},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 256},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n1024_d256_t256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "T": 256},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
        ],
        "fwd": [
            {
                "case": "b1024_n512_d256_t512_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 512},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b2048_n1024_d256_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 1024, "D": 256, "T": 128},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 8,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 256},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 2,
                },
            },
            {
                "case": "b512_n1024_d256_t256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "T": 256},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 8,
                    "num_stages": 3,
                },
            },
        ],
    },
}

_SOC_PATTERNS = (
    ("^Ascend950PR", "950PR"),
    ("^Ascend950DT", "950DT"),
    ("^Ascend910_9581", "950DT"),
    ("^Ascend910_95", "950PR"),
    ("^Ascend910B", "910B"),
    ("^Ascend910_93", "910_93"),
    ("\\bGH200\\b", "GH200"),
    ("\\bH200\\b", "H200"),
    ("\\bH100\\b", "H100"),
    ("\\bH800\\b", "H800"),
    ("\\bH20\\b", "H20"),
    ("\\bB200\\b", "B200"),
    ("\\bB100\\b", "B100"),
    ("\\bA100\\b", "A100"),
    ("\\bA800\\b", "A800"),
    ("\\bA10\\b", "A10"),
    ("\\bL40S\\b", "L40S"),
    ("\\bL40\\b", "L40"),
    ("\\bL4\\b", "L4"),
    ("\\bV100\\b", "V100"),
    ("\\bT4\\b", "T4"),
)
_VENDOR_WORDS = ("NVIDIA", "GeForce", "Tesla", "Quadro")
_LAUNCH_OPTIONS = {
    "cuda": ("num_stages", "num_warps"),
    "npu": (
        "compile_mode",
        "multibuffer",
        "num_warps",
        "unit_flag",
        "limit_auto_multi_buffer_of_local_buffer",
        "limit_auto_multi_buffer_only_for_local_buffer",
        "set_workspace_multibuffer",
        "enable_hivm_auto_cv_balance",
        "tile_mix_vector_loop",
        "tile_mix_cube_loop",
        "enable_auto_bind_sub_block",
        "sync_solver",
    ),
}
# the config keys the launchers pass the kernels as they are (the other keys are launch options,
# or arguments the launchers read themselves)
_CONSTEXPRS = ("BLOCK_K", "BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "T", "BLOCK_K": "D"},
    "bwd_dx": {"BLOCK_M": "max_seq_len", "BLOCK_N": "D", "BLOCK_K": "T"},
    "bwd_dy_db": {"BLOCK_M": "D", "BLOCK_N": "T", "BLOCK_K": "max_seq_len"},
}
# kernel -> the shape keys of the dimensions a program holds whole (`_fit_warps`)
_WHOLE_KEYS = {}
_MAX_WARPS = 16  # the most warps a search tries (the ops' num_warps tunables)
_DTYPE_NAMES = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16"}
_ITEMSIZES = {"float32": 4, "float16": 2, "bfloat16": 2}
_PICKED = {}  # (device, kernel, dtype, shape) -> config
_WARNED = set()  # (kernel, soc) whose nearest-case fallback was warned about


class NearestFrozenCase(UserWarning):
    """A launcher took the config of the nearest frozen `case` for `kernel` on `soc`."""

    def __init__(self, kernel, soc, shape, dtype, case):
        super().__init__(
            f"{kernel}: no config frozen on {soc} for {shape} {dtype}; using that of the nearest "
            f"frozen case {case} (said once per kernel and soc)"
        )
        self.kernel, self.soc, self.case = kernel, soc, case


def _soc_of(device):
    """The soc of a tensor's device: `H200`, `950PR`, ... or `cpu` for the interpreter."""
    if device.type == "cpu":
        return "cpu"
    if device.type == "npu":
        name = torch.npu.get_device_name(device.index or 0)
    else:
        name = torch.cuda.get_device_name(device)
    for pattern, soc in _SOC_PATTERNS:
        if re.search(pattern, name):
            return soc
    words = [w for w in name.split() if w not in _VENDOR_WORDS]
    return "".join(words) or name


def _shape_distance(frozen, asked):
    return sum(
        abs(math.log2(max(v, 1)) - math.log2(max(asked.get(k, 1), 1))) for k, v in frozen.items()
    )


def _fit_warps(kernel, config, frozen, asked):
    """A config frozen for dimensions held whole (a norm's row) of another padded size keeps its
    elements per thread: its warps scale with that size (a row 64 times wider: 64 times the
    warps, at most _MAX_WARPS), where ptxas spent minutes on a row of 16384 at one warp."""
    keys = _WHOLE_KEYS.get(kernel, ())
    if "num_warps" not in config or not keys:
        return config
    ratio = math.prod(triton.next_power_of_2(max(asked.get(k, 1), 1)) for k in keys) / math.prod(
        triton.next_power_of_2(max(frozen.get(k, 1), 1)) for k in keys
    )
    warps = min(max(int(config["num_warps"] * ratio), 1), _MAX_WARPS)
    return {**config, "num_warps": warps}


def _pick_config(kernel, shape, dtype, device, default):
    """The frozen config of this soc for the case; else the nearest frozen case's, its blocks fit
    to the shape; else `default`.

    Nearest: the smallest sum over the shape keys of |log2(frozen) - log2(asked)|, among the cases
    of the dtype and of the other dtypes of its element size (float16 and bfloat16: the same tile
    bytes, so the same shared memory or unified buffer, and the same matrix-unit rate), those
    counted one doubling further; a warning once per kernel and soc in a process (a test suite
    of many small shapes would repeat it for each). Fit: a block larger than the dimension it
    tiles padded to a power of two (at least 16, what tl.dot takes) only computes padding, and
    the search never measures one; it is shrunk to that size; the warps scale with the
    dimensions held whole (`_fit_warps`). No tuning happens at run time. Picks are kept per device,
    kernel, dtype and shape: the launch of a small kernel must not wait for the lookup.
    `default` is the kernel's default for `shape` (`default_config(kernel, shape)`).
    """
    key = (device, kernel, dtype, tuple(sorted(shape.items())))
    if key not in _PICKED:
        _PICKED[key] = _pick(_soc_of(device), kernel, shape, dtype, default)
    return dict(_PICKED[key])


def _pick(soc, kernel, shape, dtype, default):
    frozen = FROZEN_CONFIGS.get(soc, {}).get(kernel, [])
    for entry in frozen:
        if entry["dtype"] == dtype and entry["shape"] == shape:
            return dict(entry["config"])
    size = _ITEMSIZES.get(dtype)
    entries = [
        e for e in frozen if e["dtype"] == dtype or (size and _ITEMSIZES.get(e["dtype"]) == size)
    ]
    if not entries:
        return dict(default)
    nearest = min(
        entries,
        key=lambda e: (
            _shape_distance(e["shape"], shape) + (e["dtype"] != dtype),
            e["dtype"] != dtype,
        ),
    )
    if (kernel, soc) not in _WARNED:
        _WARNED.add((kernel, soc))
        warnings.warn(NearestFrozenCase(kernel, soc, shape, dtype, nearest["case"]), stacklevel=4)
    fitted = _fit_blocks(kernel, nearest["config"], shape)
    return _fit_warps(kernel, fitted, nearest["shape"], shape)


def _fit_blocks(kernel, config, shape):
    fitted = dict(config)
    for block, dim in _TILE_KEYS.get(kernel, {}).items():
        if block in fitted and dim in shape:
            fitted[block] = min(fitted[block], max(16, triton.next_power_of_2(shape[dim])))
    return fitted


def _split_config(config, device):
    """(constexpr tunables, launch options this device understands) of a config. On an NPU,
    num_warps goes only with compile_mode (SIMT code): triton-ascend's SIMD code never reads it."""
    options = _LAUNCH_OPTIONS.get(device.type, ())
    constexprs = {k: v for k, v in config.items() if k in _CONSTEXPRS}
    launch = {k: v for k, v in config.items() if k in options}
    if device.type == "npu" and "compile_mode" not in launch:
        launch.pop("num_warps", None)
    return constexprs, launch


def _checked(check):
    return check or os.environ.get("AUTOTUNE_CHECK") == "1"


def _check_offsets(offsets, rows):
    """Raise ValueError (one line) unless offsets are 0, non-decreasing, ending at `rows`."""
    if offsets.dim() != 1 or offsets.numel() < 2 or offsets.dtype not in (torch.int32, torch.int64):
        raise ValueError("offsets must be a 1-D int32/int64 tensor with B + 1 entries")
    host = offsets.tolist()
    if host[0] != 0:
        raise ValueError(f"offsets must start at 0, not {host[0]}")
    for i in range(1, len(host)):
        if host[i] < host[i - 1]:
            raise ValueError(
                f"offsets must be non-decreasing: offsets[{i}]={host[i]} < offsets[{i - 1}]={host[i - 1]}"
            )
    if host[-1] != rows:
        raise ValueError(f"offsets end at {host[-1]} but the jagged tensor has {rows} rows")


def _configure(kernel, config, shape, tensor):
    """_split_config of `config`, or when it is None of the config picked for the case: `shape`,
    the dtype and device of `tensor`, and the port's own `default_config(kernel, shape)`."""
    if config is None:
        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))
        default = default_config(kernel, shape)
        config = _pick_config(kernel, shape, dtype, tensor.device, default)
    return _split_config(config, tensor.device)


def _precision(allow_tf32: bool, device) -> str:
    """tl.dot's input precision: IEEE fp32, or where TF32 is allowed TF32 on a GPU and its Ascend
    counterpart HF32 on an NPU (triton-ascend refuses tf32: "please use input_precision='hf32' on
    Ascend instead", triton-ascend 3.2.0 triton/triton_patch/language/core.py, `dot`)."""
    if not allow_tf32:
        return "ieee"
    return "hf32" if device.type == "npu" else "tf32"


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's first config of _get_bmm_configs, the list its autotuner times for both
    kernels: its pick among the 32 is a timing on the GPU, not a rule."""
    if kernel not in ("fwd", "bwd_dx", "bwd_dy_db"):
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd_dx, bwd_dy_db")
    return {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}


def _shape(batch: int, max_seq_len: int, d: int, t: int) -> dict:
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d, "T": t}


def _flat(precision: str, dtype: torch.dtype, device) -> bool:
    """Whether a tile's rows and K blocks are one loop (`_bmm_add_steps`): on a CUDA GPU in IEEE
    fp32 (fp32 inputs, TF32 off), a dot of FMAs whose operands and result live in registers. On
    the H200, at the 32 configs of upstream's list, the one loop's best was 3.5% faster than the
    nested loops' best on the fp32 performance case (the nested loops took more registers and
    spilled at 18 of them), while in bf16 the nested loops' best was 1.3% faster
    (docs/benchmarks.md). Not on an NPU: there the accumulator's reset inside the loop moves it
    from L0C to the unified buffer (bishengir 1.2.0, compile-only: 4-33 KB of unified buffer at
    the default config became 74-82 KB, and 128 x 128 blocks no longer fit)."""
    return precision == "ieee" and dtype == torch.float32 and device.type == "cuda"


def _programs(tiles: int) -> int:
    return max(1, min(tiles, MAX_PROGRAMS))


def _dense_bmm_add(kernel, shape, a, b, bias, offsets, max_seq_len, allow_tf32, config):
    """[sum_L, K] jagged @ [B, K, N] dense (+ bias [B, N]) -> [sum_L, N] jagged, every row."""
    batch, k, n = b.shape
    blocks, options = _configure(kernel, config, shape, a)
    c = torch.empty(a.size(0), n, dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    rows = max(int(max_seq_len), 1)  # the grid's row blocks per sequence (at least one)
    precision = _precision(allow_tf32, a.device)
    grid = (triton.cdiv(n, blocks["BLOCK_N"]), triton.cdiv(rows, blocks["BLOCK_M"]), batch)
    tiles = math.prod(grid)
    programs = _programs(tiles)
    _jagged_dense_bmm_add_kernel[grid if programs == tiles else (programs,)](
        offsets, a, b, c if bias is None else bias, c, rows, batch, n, k, programs,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2),
        0 if bias is None else bias.stride(0), c.stride(0), c.stride(1),
        PRECISION=precision, HAS_BIAS=bias is not None, PERSISTENT=programs < tiles,
        FLAT=_flat(precision, a.dtype, a.device), **blocks, **options,
    )  # fmt: skip
    return c


def _jagged_bmm_reduce(kernel, shape, a, b, offsets, dtype, allow_tf32, config):
    """([B, M, N] = a^T b per sequence of a [sum_L, M] and b [sum_L, N], [B, N] = b's rows
    summed per sequence); the first in `dtype`, the second in b's."""
    m, n = a.size(1), b.size(1)
    batch = offsets.numel() - 1
    blocks, options = _configure(kernel, config, shape, a)
    c = torch.empty(batch, m, n, dtype=dtype, device=a.device)
    r = torch.empty(batch, n, dtype=b.dtype, device=b.device)
    if c.numel() == 0:
        return c, r.zero_()
    tiles = batch * triton.cdiv(m, blocks["BLOCK_M"]) * triton.cdiv(n, blocks["BLOCK_N"])
    programs = _programs(tiles)
    _jagged_bmm_reduce_kernel[(programs,)](
        offsets, a, b, c, r, batch, m, n, programs,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), c.stride(2),
        r.stride(0), PRECISION=_precision(allow_tf32, a.device), REDUCE=True, **blocks, **options,
    )  # fmt: skip
    return c, r


def _check_inputs(x, y, bias, offsets, dout=None):
    if x.dim() != 2 or y.dim() != 3 or bias.dim() != 2:
        raise ValueError("expected x: [sum_L, D], y: [B, D, T], bias: [B, T]")
    batch, d, t = y.shape
    if x.size(1) != d:
        raise ValueError(f"x {tuple(x.shape)} must be [sum_L, {d}] for y {tuple(y.shape)}")
    if tuple(bias.shape) != (batch, t):
        raise ValueError(f"bias {tuple(bias.shape)} must be [{batch}, {t}] for y {tuple(y.shape)}")
    if offsets.numel() != batch + 1:
        raise ValueError(f"offsets has {offsets.numel()} entries, expected B + 1 = {batch + 1}")
    if not (x.dtype == y.dtype == bias.dtype):
        raise ValueError("x, y and bias must share one dtype")
    if dout is not None and (tuple(dout.shape) != (x.size(0), t) or dout.dtype != x.dtype):
        raise ValueError(f"dout {tuple(dout.shape)} must be [{x.size(0)}, {t}] of x's dtype")
    _check_offsets(offsets, x.size(0))


def jagged_dense_bmm_broadcast_add_fwd(
    x, y, bias, offsets, max_seq_len, allow_tf32=False, *, config=None, check=False
):
    """x [sum_L, D] jagged @ y [B, D, T] + bias [B, T] per sequence -> [sum_L, T]."""
    if _checked(check):
        _check_inputs(x, y, bias, offsets)
    shape = _shape(*y.shape[:1], max_seq_len, *y.shape[1:])
    return _dense_bmm_add("fwd", shape, x, y, bias, offsets, max_seq_len, allow_tf32, config)


def bwd_dx(x, y, bias, offsets, max_seq_len, dout, allow_tf32=False, *, config=None):
    """dx = dout @ y^T per sequence: [sum_L, T] @ [B, T, D] -> [sum_L, D]."""
    shape = _shape(*y.shape[:1], max_seq_len, *y.shape[1:])
    yt = y.permute(0, 2, 1)
    return _dense_bmm_add("bwd_dx", shape, dout, yt, None, offsets, max_seq_len, allow_tf32, config)


def bwd_dy_db(x, y, bias, offsets, max_seq_len, dout, allow_tf32=False, *, config=None):
    """(dy, dbias): dy = x^T @ dout per sequence [B, D, T], dbias = dout's rows summed [B, T]."""
    shape = _shape(*y.shape[:1], max_seq_len, *y.shape[1:])
    return _jagged_bmm_reduce("bwd_dy_db", shape, x, dout, offsets, y.dtype, allow_tf32, config)


def jagged_dense_bmm_broadcast_add_bwd(
    x, y, bias, offsets, max_seq_len, dout, allow_tf32=False, *, configs=None, check=False
):
    """(dx, dy, dbias) for the output gradient dout [sum_L, T]."""
    configs = configs or {}
    if _checked(check):
        _check_inputs(x, y, bias, offsets, dout)
    args = (x, y, bias, offsets, max_seq_len, dout, allow_tf32)
    dx = bwd_dx(*args, config=configs.get("bwd_dx"))
    return (dx, *bwd_dy_db(*args, config=configs.get("bwd_dy_db")))


class JaggedDenseBmmBroadcastAddFunction(torch.autograd.Function):
    """Autograd of the port (upstream's _JaggedDenseBmmBroadcastAddFunction)."""

    @staticmethod
    def forward(ctx, max_seq_len, seq_offsets, jagged, dense, bias):
        jagged, bias = jagged.contiguous(), bias.contiguous()
        ctx.save_for_backward(seq_offsets, jagged, dense, bias)
        ctx.max_seq_len = max_seq_len
        return jagged_dense_bmm_broadcast_add_fwd(jagged, dense, bias, seq_offsets, max_seq_len)

    @staticmethod
    def backward(ctx, d_out):
        seq_offsets, jagged, dense, bias = ctx.saved_tensors
        args = (jagged, dense, bias, seq_offsets, ctx.max_seq_len, d_out.contiguous())
        return (None, None, *jagged_dense_bmm_broadcast_add_bwd(*args))


def jagged_dense_bmm_broadcast_add(max_seq_len, seq_offsets, jagged, dense, bias):
    """Upstream's triton_jagged_dense_bmm_broadcast_add(max_seq_len, seq_offsets, jagged, dense,
    bias): jagged [sum_L, D] @ dense [B, D, T] + bias [B, T] per sequence, differentiable."""
    return JaggedDenseBmmBroadcastAddFunction.apply(max_seq_len, seq_offsets, jagged, dense, bias)
