# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' HSTU attention (NVIDIA/recsys-examples,
# examples/hstu/ops/triton_ops/triton_hstu_attention.py, see README.md), written here: its
# non-TMA, non-TLX kernels (triton-ascend has neither tensor descriptors nor TLX). Per sequence
# and head, with SiLU in place of a softmax:
#   out[m] = sum_n valid(m, n) * silu(alpha * q[m] . k[n]) / scaling_seqlen * v[n]
# where valid is upstream's causal mask with per-sequence num_targets, contextual_seq_len and the
# max_attn_len window (`_valid`). The forward walks upstream's key ranges per query block; the
# backward walks the key blocks of a (sequence, head) in one program, or with SEQUENCE_PARALLEL
# one key block a program (upstream's two forms), each against the query rows upstream walks,
# accumulating dq in fp32 (upstream: in q's dtype); the cached forward is the
# forward's kernel with new queries delta_q against a KV cache (IS_DELTA_Q).
# Differences from upstream: SiLU as x / (1 + exp(-x)) (libdevice's fast_dividef and fast_expf
# are CUDA's), head dims that are not powers of two (masked, padded blocks; upstream's blocks are
# the head dim itself), tl.dot's precision "hf32" on an NPU where TF32 is allowed, the
# sequence-parallel backward's dq added by fp32 atomics (upstream: a spin lock on atomic_cas per dq
# block, read-add-write in q's dtype), the forward's last key block cut at the end of its key
# range (upstream's can add a target's diagonal twice, see README.md), and the config passed
# per launch from the frozen configs below (upstream: Triton's autotuner over its own lists).
"""Triton port of HSTU attention: forward, backward (dq, dk, dv) and the cached forward."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _valid(
    rows, cols, seq_len, n_targets, contextual_seq_len, max_attn_len,
    HAS_TARGETS: tl.constexpr, HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr,
):  # fmt: skip
    """Which (row, col) positions of a sequence attend, for rows and cols that broadcast
    against each other. Contextual positions share id 0 and target positions the id of the
    first target; a row sees the columns of lower id, and itself; within the window (by id)
    only; a contextual row sees every non-target column."""
    diagonal = rows == cols
    max_ids = seq_len
    if HAS_CONTEXTUAL:
        rows = tl.maximum(rows - contextual_seq_len + 1, 0)
        cols = tl.maximum(cols - contextual_seq_len + 1, 0)
        max_ids = max_ids - contextual_seq_len + 1
    if HAS_TARGETS:
        max_ids = max_ids - n_targets
        rows = tl.minimum(rows, max_ids)
        cols = tl.minimum(cols, max_ids)
    distance = rows - cols
    valid = diagonal | (distance > 0)
    if HAS_WINDOW:
        valid = valid & (distance <= max_attn_len)
    if HAS_CONTEXTUAL:
        valid = valid | ((rows == 0) & (cols < max_ids))
    return valid


@triton.jit
def _fwd_block(
    acc, q, k_ptr, v_ptr, start_n, end_n, offs_m, seq_len, n_targets, alpha, inv_scaling,
    contextual_seq_len, max_attn_len, stride_kn, stride_vn,
    DIM_Q: tl.constexpr, DIM_V: tl.constexpr, HAS_TARGETS: tl.constexpr,
    HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_D_Q: tl.constexpr, BLOCK_D_V: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """acc + silu-weighted v of the keys [start_n, min(start_n + BLOCK_N, end_n))."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    mask_n = offs_n < end_n
    offs_dq = tl.arange(0, BLOCK_D_Q)
    offs_dv = tl.arange(0, BLOCK_D_V)
    kt = tl.load(
        k_ptr + offs_n[None, :] * stride_kn + offs_dq[:, None],
        mask=mask_n[None, :] & (offs_dq < DIM_Q)[:, None],
        other=0.0,
    )
    qk = tl.dot(q, kt, input_precision=PRECISION) * alpha
    valid = _valid(
        offs_m[:, None], offs_n[None, :], seq_len, n_targets, contextual_seq_len, max_attn_len,
        HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW,
    )  # fmt: skip
    p = tl.where(valid, qk / (1.0 + tl.exp(-qk)) * inv_scaling, 0.0)
    v = tl.load(
        v_ptr + offs_n[:, None] * stride_vn + offs_dv[None, :],
        mask=mask_n[:, None] & (offs_dv < DIM_V)[None, :],
        other=0.0,
    )
    return acc + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)


@triton.jit
def _fwd_kernel(
    Q, K, V, seq_offsets, num_targets, sort_indices, Out,
    stride_qm, stride_qh, stride_kn, stride_kh, stride_vn, stride_vh, stride_om, stride_oh,
    alpha, inv_scaling, contextual_seq_len, max_attn_len, num_heads, delta_size,
    DIM_Q: tl.constexpr, DIM_V: tl.constexpr, HAS_TARGETS: tl.constexpr,
    HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SORT: tl.constexpr,
    IS_DELTA_Q: tl.constexpr, PRECISION: tl.constexpr, BLOCK_D_Q: tl.constexpr,
    BLOCK_D_V: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """One BLOCK_M block of queries of one (sequence, head). IS_DELTA_Q: the queries are the
    sequence's last delta_size positions, their rows in Q and Out delta_size per sequence."""
    pid = tl.program_id(0)
    off_zh = tl.program_id(1)
    off_z = off_zh // num_heads
    off_h = (off_zh % num_heads).to(tl.int64)
    if HAS_SORT:
        off_z = tl.load(sort_indices + off_z)
    seq_start = tl.load(seq_offsets + off_z).to(tl.int64)
    seq_len = (tl.load(seq_offsets + off_z + 1) - seq_start).to(tl.int32)
    first = pid * BLOCK_M  # the block's first row among the sequence's query rows
    if IS_DELTA_Q:
        start_m = first + seq_len - delta_size
        q_start = off_z.to(tl.int64) * delta_size
        q_rows = delta_size
    else:
        start_m = first
        q_start = seq_start
        q_rows = seq_len
    if start_m < seq_len:
        n_targets = 0
        if HAS_TARGETS:
            n_targets = tl.load(num_targets + off_z).to(tl.int32)
        offs_m = start_m + tl.arange(0, BLOCK_M)
        local = first + tl.arange(0, BLOCK_M)
        mask_m = local < q_rows
        offs_dq = tl.arange(0, BLOCK_D_Q)
        offs_dv = tl.arange(0, BLOCK_D_V)
        q = tl.load(
            Q + off_h * stride_qh + (q_start + local)[:, None] * stride_qm + offs_dq[None, :],
            mask=mask_m[:, None] & (offs_dq < DIM_Q)[None, :],
            other=0.0,
        )
        k_ptr = K + off_h * stride_kh + seq_start * stride_kn
        v_ptr = V + off_h * stride_vh + seq_start * stride_vn
        acc = tl.zeros([BLOCK_M, BLOCK_D_V], dtype=tl.float32)
        # Upstream's key range of the block: from the window's start (keys before it are masked
        # for every row), up to the block's diagonal; a block of targets stops at the history
        # and adds its own diagonal block after; a contextual block sees the whole sequence.
        uih_end = seq_len - n_targets
        low = start_m * 0
        high = start_m + BLOCK_M
        if HAS_WINDOW:
            low = tl.minimum(start_m, uih_end) - max_attn_len
            if HAS_CONTEXTUAL:
                low = tl.where(low > contextual_seq_len, low, 0)
            else:
                low = tl.maximum(low, 0)
        targets_apart = False
        if HAS_TARGETS:
            targets_apart = tl.cdiv(uih_end, BLOCK_N) * BLOCK_N < start_m
            high = tl.where(targets_apart, uih_end, high)
        if HAS_CONTEXTUAL:
            whole = start_m < contextual_seq_len
            low = tl.where(whole, 0, low)
            high = tl.where(whole, seq_len, high)
        # A block is cut at `high`: upstream's is not, and where targets come apart its last
        # block can reach the diagonal block that the loop below adds again.
        end_n = tl.minimum(high, seq_len)
        for start_n in range(low, high, BLOCK_N):
            acc = _fwd_block(
                acc, q, k_ptr, v_ptr, start_n, end_n, offs_m, seq_len, n_targets, alpha, inv_scaling,
                contextual_seq_len, max_attn_len, stride_kn, stride_vn, DIM_Q, DIM_V,
                HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW, PRECISION, BLOCK_D_Q, BLOCK_D_V, BLOCK_N,
            )  # fmt: skip
        if targets_apart:
            for start_n in range(start_m, start_m + BLOCK_M, BLOCK_N):
                acc = _fwd_block(
                    acc, q, k_ptr, v_ptr, start_n, seq_len, offs_m, seq_len, n_targets, alpha,
                    inv_scaling, contextual_seq_len, max_attn_len, stride_kn, stride_vn, DIM_Q,
                    DIM_V, HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW, PRECISION, BLOCK_D_Q,
                    BLOCK_D_V, BLOCK_N,
                )  # fmt: skip
        tl.store(
            Out + off_h * stride_oh + (q_start + local)[:, None] * stride_om + offs_dv[None, :],
            acc.to(Out.dtype.element_ty),
            mask=mask_m[:, None] & (offs_dv < DIM_V)[None, :],
        )


@triton.jit
def _bwd_block(
    dk, dv, k, v, Q, DOut, DQ, start_m, offs_n, seq_len, n_targets, alpha, inv_scaling,
    contextual_seq_len, max_attn_len, stride_qm, stride_dom, stride_dqm,
    DIM_Q: tl.constexpr, DIM_V: tl.constexpr, HAS_TARGETS: tl.constexpr,
    HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_D_Q: tl.constexpr, BLOCK_D_V: tl.constexpr, BLOCK_M: tl.constexpr,
    SEQUENCE_PARALLEL: tl.constexpr,
):  # fmt: skip
    """The query rows [start_m, start_m + BLOCK_M) against one key block: (dk, dv) accumulated,
    dq of the rows added to DQ (fp32): read, added and written back where one program owns the
    sequence and head, an atomic add where its key blocks run in parallel."""
    offs_m = start_m + tl.arange(0, BLOCK_M)
    mask_m = offs_m < seq_len
    offs_dq = tl.arange(0, BLOCK_D_Q)
    offs_dv = tl.arange(0, BLOCK_D_V)
    tile_q = mask_m[:, None] & (offs_dq < DIM_Q)[None, :]
    q = tl.load(Q + offs_m[:, None] * stride_qm + offs_dq[None, :], mask=tile_q, other=0.0)
    do = tl.load(
        DOut + offs_m[:, None] * stride_dom + offs_dv[None, :],
        mask=mask_m[:, None] & (offs_dv < DIM_V)[None, :],
        other=0.0,
    )
    qk = tl.dot(q, tl.trans(k), input_precision=PRECISION) * alpha
    sig = 1.0 / (1.0 + tl.exp(-qk))
    valid = _valid(
        offs_m[:, None], offs_n[None, :], seq_len, n_targets, contextual_seq_len, max_attn_len,
        HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW,
    )  # fmt: skip
    p = tl.where(valid, qk * sig * inv_scaling, 0.0).to(k.dtype)
    dv += tl.dot(tl.trans(p), do, input_precision=PRECISION)
    dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
    ds = dp * sig * (1.0 + qk * (1.0 - sig)) * inv_scaling
    ds = tl.where(valid, ds, 0.0).to(k.dtype)
    dk += tl.dot(tl.trans(ds), q, input_precision=PRECISION)  # alpha applied once, at the end
    dq_ptrs = DQ + offs_m[:, None] * stride_dqm + offs_dq[None, :]
    dq = tl.dot(ds, k, input_precision=PRECISION) * alpha
    if SEQUENCE_PARALLEL:
        tl.atomic_add(dq_ptrs, dq, mask=tile_q)
    else:
        tl.store(dq_ptrs, tl.load(dq_ptrs, mask=tile_q, other=0.0) + dq, mask=tile_q)
    return dk, dv


@triton.jit
def _bwd_column(
    Q, K, V, DOut, DQ, DK, DV, start_n, seq_len, n_targets, alpha, inv_scaling,
    contextual_seq_len, max_attn_len, stride_qm, stride_kn, stride_vn, stride_dom, stride_dqm,
    stride_dkn, stride_dvn,
    DIM_Q: tl.constexpr, DIM_V: tl.constexpr, HAS_TARGETS: tl.constexpr,
    HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_D_Q: tl.constexpr, BLOCK_D_V: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, SEQUENCE_PARALLEL: tl.constexpr,
):  # fmt: skip
    """One key block [start_n, start_n + BLOCK_N) against the query rows that can see it
    (upstream's ranges: the contextual rows, then from the block on, up to the window's end):
    its dk and dv written, its share of dq added."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    mask_n = offs_n < seq_len
    offs_dq = tl.arange(0, BLOCK_D_Q)
    offs_dv = tl.arange(0, BLOCK_D_V)
    tile_k = mask_n[:, None] & (offs_dq < DIM_Q)[None, :]
    tile_v = mask_n[:, None] & (offs_dv < DIM_V)[None, :]
    k = tl.load(K + offs_n[:, None] * stride_kn + offs_dq[None, :], mask=tile_k, other=0.0)
    v = tl.load(V + offs_n[:, None] * stride_vn + offs_dv[None, :], mask=tile_v, other=0.0)
    dk = tl.zeros([BLOCK_N, BLOCK_D_Q], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, BLOCK_D_V], dtype=tl.float32)
    low = start_n
    high = seq_len
    if HAS_WINDOW:
        high = start_n + max_attn_len + BLOCK_N
        if HAS_TARGETS:
            high = tl.where(high + n_targets < seq_len, high, seq_len)
        else:
            high = tl.minimum(high, seq_len)
    if HAS_CONTEXTUAL:
        low = tl.maximum(low, tl.cdiv(contextual_seq_len, BLOCK_M) * BLOCK_M)
        for start_m in range(0, contextual_seq_len, BLOCK_M):
            dk, dv = _bwd_block(
                dk, dv, k, v, Q, DOut, DQ, start_m, offs_n, seq_len, n_targets, alpha,
                inv_scaling, contextual_seq_len, max_attn_len, stride_qm, stride_dom, stride_dqm,
                DIM_Q, DIM_V, HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW, PRECISION, BLOCK_D_Q,
                BLOCK_D_V, BLOCK_M, SEQUENCE_PARALLEL,
            )  # fmt: skip
    for start_m in range(low, high, BLOCK_M):
        dk, dv = _bwd_block(
            dk, dv, k, v, Q, DOut, DQ, start_m, offs_n, seq_len, n_targets, alpha, inv_scaling,
            contextual_seq_len, max_attn_len, stride_qm, stride_dom, stride_dqm, DIM_Q, DIM_V,
            HAS_TARGETS, HAS_CONTEXTUAL, HAS_WINDOW, PRECISION, BLOCK_D_Q, BLOCK_D_V, BLOCK_M,
            SEQUENCE_PARALLEL,
        )  # fmt: skip
    tl.store(
        DK + offs_n[:, None] * stride_dkn + offs_dq[None, :],
        (dk * alpha).to(DK.dtype.element_ty),
        mask=tile_k,
    )
    tl.store(
        DV + offs_n[:, None] * stride_dvn + offs_dv[None, :],
        dv.to(DV.dtype.element_ty),
        mask=tile_v,
    )


@triton.jit
def _bwd_kernel(
    Q, K, V, DOut, DQ, DK, DV, seq_offsets, num_targets, sort_indices,
    stride_qm, stride_qh, stride_kn, stride_kh, stride_vn, stride_vh, stride_dom, stride_doh,
    stride_dqm, stride_dqh, stride_dkn, stride_dkh, stride_dvn, stride_dvh,
    alpha, inv_scaling, contextual_seq_len, max_attn_len, num_heads,
    DIM_Q: tl.constexpr, DIM_V: tl.constexpr, HAS_TARGETS: tl.constexpr,
    HAS_CONTEXTUAL: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SORT: tl.constexpr,
    PRECISION: tl.constexpr, BLOCK_D_Q: tl.constexpr, BLOCK_D_V: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, SEQUENCE_PARALLEL: tl.constexpr,
):  # fmt: skip
    """One (sequence, head) on axis 0: its key blocks in turn, or with SEQUENCE_PARALLEL the
    key block of axis 1 (upstream's two forms). DQ (fp32) must be zero on entry."""
    off_zh = tl.program_id(0)
    off_z = off_zh // num_heads
    off_h = (off_zh % num_heads).to(tl.int64)
    if HAS_SORT:
        off_z = tl.load(sort_indices + off_z)
    seq_start = tl.load(seq_offsets + off_z).to(tl.int64)
    seq_len = (tl.load(seq_offsets + off_z + 1) - seq_start).to(tl.int32)
    n_targets = 0
    if HAS_TARGETS:
        n_targets = tl.load(num_targets + off_z).to(tl.int32)
    Q += seq_start * stride_qm + off_h * stride_qh
    K += seq_start * stride_kn + off_h * stride_kh
    V += seq_start * stride_vn + off_h * stride_vh
    DOut += seq_start * stride_dom + off_h * stride_doh
    DQ += seq_start * stride_dqm + off_h * stride_dqh
    DK += seq_start * stride_dkn + off_h * stride_dkh
    DV += seq_start * stride_dvn + off_h * stride_dvh
    if SEQUENCE_PARALLEL:
        start_n = tl.program_id(1) * BLOCK_N
        if start_n < seq_len:
            _bwd_column(
                Q, K, V, DOut, DQ, DK, DV, start_n, seq_len, n_targets, alpha, inv_scaling,
                contextual_seq_len, max_attn_len, stride_qm, stride_kn, stride_vn, stride_dom,
                stride_dqm, stride_dkn, stride_dvn, DIM_Q, DIM_V, HAS_TARGETS, HAS_CONTEXTUAL,
                HAS_WINDOW, PRECISION, BLOCK_D_Q, BLOCK_D_V, BLOCK_M, BLOCK_N, SEQUENCE_PARALLEL,
            )  # fmt: skip
    else:
        for start_n in range(0, seq_len, BLOCK_N):
            _bwd_column(
                Q, K, V, DOut, DQ, DK, DV, start_n, seq_len, n_targets, alpha, inv_scaling,
                contextual_seq_len, max_attn_len, stride_qm, stride_kn, stride_vn, stride_dom,
                stride_dqm, stride_dkn, stride_dvn, DIM_Q, DIM_V, HAS_TARGETS, HAS_CONTEXTUAL,
                HAS_WINDOW, PRECISION, BLOCK_D_Q, BLOCK_D_V, BLOCK_M, BLOCK_N, SEQUENCE_PARALLEL,
            )  # fmt: skip


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {}

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
_CONSTEXPRS = ("BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
    "bwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
    "cached_fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
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


def _block_d(d: int) -> int:
    """The whole head dimension in one tile, padded to a power of two (tl.dot needs >= 16)."""
    return max(16, triton.next_power_of_2(d))


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's first autotune config of the kernel (`_get_fw_configs`, `_get_bw_configs`, the
    CUDA lists): its autotuner's pick among them is a timing on the GPU, not a rule."""
    if kernel in ("fwd", "cached_fwd"):
        return {"BLOCK_M": 16, "BLOCK_N": 32, "num_warps": 2, "num_stages": 2}
    if kernel == "bwd":
        return {"BLOCK_M": 16, "BLOCK_N": 32, "SEQUENCE_PARALLEL": False, "num_warps": 2,
                "num_stages": 2}  # fmt: skip
    raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd, cached_fwd")


def _shape(batch, heads, max_seq_len, d, num_targets, contextual_seq_len, max_attn_len):
    """The case shape a launch picks its config by (the op's shape keys; targets: 1 where
    per-sequence num_targets are given)."""
    return {
        "B": batch, "H": heads, "max_seq_len": int(max_seq_len), "D": d,
        "targets": int(num_targets is not None), "contextual": int(contextual_seq_len),
        "window": int(max_attn_len),
    }  # fmt: skip


def _check_inputs(q, k, v, seq_offsets, num_targets, max_seq_len, queries=None):
    """One line (ValueError) for inputs the kernels would read wrongly."""
    if q.dim() != 3 or k.dim() != 3 or v.dim() != 3:
        raise ValueError("q, k and v must be [L, H, D] jagged tensors")
    if k.shape != (k.size(0), q.size(1), q.size(2)) or v.shape[:2] != k.shape[:2]:
        raise ValueError(
            f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)}: k needs q's heads "
            "and head dim, v k's rows and heads"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k and v must share one dtype")
    if min(q.stride(2), k.stride(2), v.stride(2)) != 1 and min(q.numel(), k.numel()) > 0:
        raise ValueError("q, k and v must be contiguous in the head dim")
    if queries is None and q.size(0) != k.size(0):
        raise ValueError(f"q has {q.size(0)} rows and k {k.size(0)}: one row per position each")
    _check_offsets(seq_offsets, k.size(0))
    lengths = (seq_offsets[1:] - seq_offsets[:-1]).tolist()
    if lengths and max(lengths) > max_seq_len:
        raise ValueError(f"a sequence has {max(lengths)} rows, over max_seq_len={max_seq_len}")
    if queries is not None and lengths and min(lengths) < queries:
        raise ValueError(
            f"a sequence has {min(lengths)} rows, fewer than its {queries} new queries"
        )
    if num_targets is not None:
        if num_targets.shape != (len(lengths),):
            raise ValueError(f"num_targets must have one entry per sequence ({len(lengths)})")
        if any(t < 0 or t > n for t, n in zip(num_targets.tolist(), lengths, strict=True)):
            raise ValueError("num_targets must lie in [0, the sequence's length]")


def triton_hstu_attention_fwd(
    N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
    sort_by_length_indices, enable_tma, scaling_seqlen=-1, *, allow_tf32=None, config=None,
    check=False,
):  # fmt: skip
    """out [L, H, DimV] in q's dtype; upstream's signature. `enable_tma` picks how upstream loads
    q, k and v (tensor descriptors or pointers), not what it computes: the port has the pointer
    form only and gives the same result for either. allow_tf32 None:
    torch.backends.cuda.matmul.allow_tf32, as upstream."""
    if _checked(check):
        _check_inputs(q, k, v, seq_offsets, num_targets, N)
    return _attention_fwd(
        N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
        sort_by_length_indices, scaling_seqlen, allow_tf32, config, delta_size=0,
    )  # fmt: skip


def _attention_fwd(
    N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
    sort_by_length_indices, scaling_seqlen, allow_tf32, config, delta_size,
):  # fmt: skip
    if scaling_seqlen == -1:
        scaling_seqlen = N
    batch = seq_offsets.numel() - 1
    rows, heads, dim_q = q.shape
    dim_v = v.size(2)
    out = torch.empty((rows, heads, dim_v), dtype=q.dtype, device=q.device)
    if rows == 0 or batch == 0:
        return out
    kernel = "cached_fwd" if delta_size else "fwd"
    shape = _shape(batch, heads, N, dim_q, num_targets, contextual_seq_len, max_attn_len)
    blocks, options = _configure(kernel, config, shape, q)
    queries = delta_size if delta_size else N
    grid = (triton.cdiv(queries, blocks["BLOCK_M"]), batch * heads)
    _fwd_kernel[grid](
        q, k, v, seq_offsets, num_targets, sort_by_length_indices, out,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        out.stride(0), out.stride(1),
        float(alpha), 1.0 / scaling_seqlen, int(contextual_seq_len), int(max_attn_len), heads,
        int(delta_size), dim_q, dim_v,
        HAS_TARGETS=num_targets is not None, HAS_CONTEXTUAL=contextual_seq_len > 0,
        HAS_WINDOW=max_attn_len > 0, HAS_SORT=sort_by_length_indices is not None,
        IS_DELTA_Q=delta_size > 0, PRECISION=_tf32_precision(allow_tf32, q.device),
        BLOCK_D_Q=_block_d(dim_q), BLOCK_D_V=_block_d(dim_v), **blocks, **options,
    )  # fmt: skip
    return out


def triton_hstu_attention_bwd(
    dout, q, k, v, dq, dk, dv, seq_offsets, num_targets, N, alpha, max_attn_len,
    contextual_seq_len, sort_by_length_indices, enable_tma, scaling_seqlen=-1, *,
    allow_tf32=None, config=None, check=False,
):  # fmt: skip
    """(dq, dk, dv), written into the given dq, dk, dv (contiguous copies where they are not, as
    upstream). Upstream's signature, as triton_hstu_attention_fwd's. scaling_seqlen -1 is N, as
    in the forward (upstream's backward passes -1 on to its kernel, scaling by -1: its callers,
    `_AttentionFunction`, always give N)."""
    if _checked(check):
        _check_inputs(q, k, v, seq_offsets, num_targets, N)
    if scaling_seqlen == -1:
        scaling_seqlen = N
    dout, dq, dk, dv = (x if x.is_contiguous() else x.contiguous() for x in (dout, dq, dk, dv))
    if dout.size(0) == 0:
        return torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    batch = seq_offsets.numel() - 1
    _, heads, dim_q = q.shape
    dim_v = v.size(2)
    shape = _shape(batch, heads, N, dim_q, num_targets, contextual_seq_len, max_attn_len)
    if config is None:
        dtype = _DTYPE_NAMES.get(q.dtype, str(q.dtype))
        config = _pick_config("bwd", shape, dtype, q.device, default_config("bwd", shape))
    blocks, options = _split_config(config, q.device)
    parallel = bool(config.get("SEQUENCE_PARALLEL", False))
    grid = (batch * heads, triton.cdiv(N, blocks["BLOCK_N"]) if parallel else 1)
    # dq sums one term per key block: kept in fp32 (upstream: in q's dtype), rounded once.
    dq_sum = torch.zeros(q.shape, dtype=torch.float32, device=q.device)
    _bwd_kernel[grid](
        q, k, v, dout, dq_sum, dk, dv, seq_offsets, num_targets, sort_by_length_indices,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), v.stride(0), v.stride(1),
        dout.stride(0), dout.stride(1), dq_sum.stride(0), dq_sum.stride(1), dk.stride(0), dk.stride(1),
        dv.stride(0), dv.stride(1),
        float(alpha), 1.0 / scaling_seqlen, int(contextual_seq_len), int(max_attn_len), heads,
        dim_q, dim_v,
        HAS_TARGETS=num_targets is not None, HAS_CONTEXTUAL=contextual_seq_len > 0,
        HAS_WINDOW=max_attn_len > 0, HAS_SORT=sort_by_length_indices is not None,
        PRECISION=_tf32_precision(allow_tf32, q.device), BLOCK_D_Q=_block_d(dim_q),
        BLOCK_D_V=_block_d(dim_v), SEQUENCE_PARALLEL=parallel, **blocks, **options,
    )  # fmt: skip
    dq.copy_(dq_sum)
    return dq, dk, dv


def _tf32_precision(allow_tf32, device):
    if allow_tf32 is None:
        allow_tf32 = torch.backends.cuda.matmul.allow_tf32
    return _precision(bool(allow_tf32), device)


def sort_by_length_indices(seq_offsets):
    """Sequences longest first, as upstream's forward sorts them (`sort_by_length`)."""
    lengths = seq_offsets[1:] - seq_offsets[:-1]
    return torch.sort(lengths, descending=True, stable=False)[1]


class _AttentionFunction(torch.autograd.Function):
    """Upstream's autograd Function: the same arguments, in the same order."""

    @staticmethod
    def forward(
        ctx, N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
        sort_by_length, enable_tma, scaling_seqlen,
    ):  # fmt: skip
        indices = sort_by_length_indices(seq_offsets) if sort_by_length else None
        ctx.save_for_backward(q, k, v, seq_offsets, num_targets, indices)
        ctx.args = (N, alpha, max_attn_len, contextual_seq_len, enable_tma, scaling_seqlen)
        return triton_hstu_attention_fwd(
            N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
            indices, enable_tma, scaling_seqlen,
        )  # fmt: skip

    @staticmethod
    def backward(ctx, dout):
        q, k, v, seq_offsets, num_targets, indices = ctx.saved_tensors
        N, alpha, max_attn_len, contextual_seq_len, enable_tma, scaling_seqlen = ctx.args
        dq, dk, dv = triton_hstu_attention_bwd(
            dout, q, k, v, torch.empty_like(q), torch.empty_like(k), torch.empty_like(v),
            seq_offsets, num_targets, N, alpha, max_attn_len, contextual_seq_len, indices,
            enable_tma, scaling_seqlen,
        )  # fmt: skip
        return None, None, dq, dk, dv, None, None, None, None, None, None, None


def triton_hstu_mha(
    N, alpha, q, k, v, seq_offsets, num_targets=None, max_attn_len=0, contextual_seq_len=0,
    sort_by_length=False, enable_tma=False, scaling_seqlen=-1,
):  # fmt: skip
    """Upstream's entry point: q, k [L, H, D], v [L, H, DimV] jagged by seq_offsets."""
    if scaling_seqlen == -1:
        scaling_seqlen = N
    return _AttentionFunction.apply(
        N, alpha, q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
        sort_by_length, enable_tma, scaling_seqlen,
    )  # fmt: skip


def triton_cached_hstu_mha(
    N, alpha, delta_q, k, v, seq_offsets, num_targets=None, max_attn_len=0, contextual_seq_len=0,
    enable_tma=False, scaling_seqlen=-1, *, allow_tf32=None, config=None, check=False,
):  # fmt: skip
    """Upstream's cached forward: delta_q [B * DeltaSize, H, D], the new queries of each
    sequence, its last DeltaSize positions, against the cache k, v [L, H, D] (which holds them)."""
    batch = seq_offsets.numel() - 1
    delta_size = delta_q.size(0) // batch if batch else 0
    if _checked(check):
        if delta_q.size(0) != batch * delta_size:
            raise ValueError(f"delta_q has {delta_q.size(0)} rows, not a multiple of B={batch}")
        _check_inputs(delta_q, k, v, seq_offsets, num_targets, float("inf"), delta_size)
    if delta_size == 0:
        return torch.empty((0, *delta_q.shape[1:2], v.size(2)), dtype=delta_q.dtype,
                           device=delta_q.device)  # fmt: skip
    return _attention_fwd(
        N, alpha, delta_q, k, v, seq_offsets, num_targets, max_attn_len, contextual_seq_len,
        None, scaling_seqlen, allow_tf32, config, delta_size,
    )  # fmt: skip
