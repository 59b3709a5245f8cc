# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's multi_head_jagged_flash_attention (pytorch/FBGEMM, see README.md),
# written here. Per head h, self-attention inside each jagged sequence, softmax over all keys of the
# sequence, the probabilities divided by max_seq_len:
#   out[h, m] = sum_{n < M} softmax_n(q[h, m] . k[h, n]) / max_seq_len * v[h, n]
# Differences from upstream: lse and delta kept in fp32, -inf masking of padded keys, the division
# by max_seq_len applied to the fp32 accumulators, the forward's q.k reduced over D in BLOCK_D
# slices (upstream: one slice of the whole D), max_seq_len a runtime argument (upstream: a
# constexpr, one compile per value), tunables passed per launch from the frozen configs below.
"""Triton port of multi_head_jagged_flash_attention: forward, the do.o preprocess, the backward."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(
    q_ptr, k_ptr, v_ptr, offsets_ptr, o_ptr, lse_ptr, num_heads, max_seq_len, D: tl.constexpr,
    stride_qh, stride_qm, stride_qd, stride_kh, stride_kn, stride_kd, stride_vh, stride_vn,
    stride_vd, stride_oh, stride_om, stride_od, stride_lh,
    PRECISION: tl.constexpr, NEXT_D: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """One BLOCK_M block of queries of one (sequence, head); q.k reduced over D in BLOCK_D slices.
    D is a compile-time constant, as upstream has it: the slices over D unroll and their masks
    fold away where BLOCK_D divides D."""
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    pid_b = pid_bh // num_heads
    pid_h = pid_bh % num_heads
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    start_m = pid_m * BLOCK_M
    if start_m < seqlen:
        q_ptr += pid_h * stride_qh
        k_ptr += pid_h * stride_kh
        v_ptr += pid_h * stride_vh
        offs_m = start_m + tl.arange(0, BLOCK_M)
        mask_m = offs_m < seqlen
        offs_nd = tl.arange(0, NEXT_D)
        mask_nd = offs_nd < D
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
        acc = tl.zeros([BLOCK_M, NEXT_D], dtype=tl.float32)
        for start_n in range(0, seqlen, BLOCK_N):
            offs_n = start_n + tl.arange(0, BLOCK_N)
            mask_n = offs_n < seqlen
            qk = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
            for start_d in tl.static_range(0, D, BLOCK_D):
                offs_d = start_d + tl.arange(0, BLOCK_D)
                mask_d = offs_d < D
                q = tl.load(
                    q_ptr + (begin + offs_m)[:, None] * stride_qm + offs_d[None, :] * stride_qd,
                    mask=mask_m[:, None] & mask_d[None, :],
                    other=0.0,
                )
                kt = tl.load(
                    k_ptr + (begin + offs_n)[None, :] * stride_kn + offs_d[:, None] * stride_kd,
                    mask=mask_d[:, None] & mask_n[None, :],
                    other=0.0,
                )
                qk += tl.dot(q, kt, input_precision=PRECISION)
            qk = tl.where(mask_n[None, :], qk, float("-inf"))
            m_new = tl.maximum(m_i, tl.max(qk, axis=1))
            p = tl.exp(qk - m_new[:, None])
            alpha = tl.exp(m_i - m_new)
            l_i = alpha * l_i + tl.sum(p, axis=1)
            v = tl.load(
                v_ptr + (begin + offs_n)[:, None] * stride_vn + offs_nd[None, :] * stride_vd,
                mask=mask_n[:, None] & mask_nd[None, :],
                other=0.0,
            )
            pv = tl.dot(p.to(v_ptr.dtype.element_ty), v, input_precision=PRECISION)
            acc = acc * alpha[:, None] + pv
            m_i = m_new
        # Rows of the block past the sequence saw q = 0, so l_i > 0 everywhere: no 0/0.
        lse = m_i + tl.log(l_i)
        tl.store(lse_ptr + pid_h * stride_lh + begin + offs_m, lse, mask=mask_m)
        out = acc / (l_i * max_seq_len)[:, None]
        tl.store(
            o_ptr
            + pid_h * stride_oh
            + (begin + offs_m)[:, None] * stride_om
            + offs_nd[None, :] * stride_od,
            out.to(o_ptr.dtype.element_ty),
            mask=mask_m[:, None] & mask_nd[None, :],
        )


@triton.jit
def _bwd_preprocess_kernel(
    o_ptr, do_ptr, offsets_ptr, delta_ptr, num_heads, max_seq_len, D,
    stride_oh, stride_om, stride_od, stride_doh, stride_dom, stride_dod, stride_delta_h,
    BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """delta[h, row] = sum_d out[h, row, d] * dout[h, row, d], first max_seq_len rows of a sequence."""
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    pid_b = pid_bh // num_heads
    pid_h = pid_bh % num_heads
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    start_m = pid_m * BLOCK_M
    if start_m < seqlen:
        offs_m = start_m + tl.arange(0, BLOCK_M)
        mask_m = offs_m < seqlen
        rows = (begin + offs_m)[:, None]
        delta = tl.zeros([BLOCK_M], dtype=tl.float32)
        for start_d in range(0, D, BLOCK_D):
            offs_d = start_d + tl.arange(0, BLOCK_D)
            mask = mask_m[:, None] & (offs_d < D)[None, :]
            o = tl.load(
                o_ptr + pid_h * stride_oh + rows * stride_om + offs_d[None, :] * stride_od,
                mask=mask,
                other=0.0,
            )
            do = tl.load(
                do_ptr + pid_h * stride_doh + rows * stride_dom + offs_d[None, :] * stride_dod,
                mask=mask,
                other=0.0,
            )
            delta += tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
        tl.store(delta_ptr + pid_h * stride_delta_h + begin + offs_m, delta, mask=mask_m)


@triton.jit
def _bwd_kernel(
    q_ptr, k_ptr, v_ptr, offsets_ptr, do_ptr, lse_ptr, delta_ptr, dq_ptr, dk_ptr, dv_ptr,
    num_heads, max_seq_len, D,
    stride_qh, stride_qm, stride_qd, stride_kh, stride_kn, stride_kd, stride_vh, stride_vn,
    stride_vd, stride_doh, stride_dom, stride_dod, stride_lh, stride_delta_h,
    stride_dqh, stride_dqm, stride_dqd, stride_dkh, stride_dkn, stride_dkd,
    stride_dvh, stride_dvn, stride_dvd,
    PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """Program pid of one (sequence, head): dk, dv of keys [pid * BLOCK_N, +BLOCK_N) (queries in
    BLOCK_M steps), then, as upstream, dq of queries [pid * BLOCK_M, +BLOCK_M) (keys in BLOCK_N
    steps). The grid has one program per BLOCK_N rows, so every dq row is written only when
    BLOCK_M == BLOCK_N: a static constraint of this kernel.

    With p = exp(q.k - lse) the softmax and N = max_seq_len: dv = (p / N)^T do,
    ds = p (do.v - N delta) / N, dk = ds^T q, dq = ds k; the 1/N goes on the fp32 accumulators.
    """
    pid = tl.program_id(0)
    pid_bh = tl.program_id(1)
    pid_b = pid_bh // num_heads
    pid_h = pid_bh % num_heads
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    q_ptr += pid_h * stride_qh
    k_ptr += pid_h * stride_kh
    v_ptr += pid_h * stride_vh
    do_ptr += pid_h * stride_doh
    lse_ptr += pid_h * stride_lh + begin
    delta_ptr += pid_h * stride_delta_h + begin
    inv_n = 1.0 / max_seq_len
    offs_d = tl.arange(0, BLOCK_D)
    mask_d = offs_d < D
    start_n = pid * BLOCK_N
    if start_n < seqlen:
        offs_n = start_n + tl.arange(0, BLOCK_N)
        mask_n = offs_n < seqlen
        tile_n = mask_n[:, None] & mask_d[None, :]
        rows_n = (begin + offs_n)[:, None]
        k = tl.load(
            k_ptr + rows_n * stride_kn + offs_d[None, :] * stride_kd, mask=tile_n, other=0.0
        )
        v = tl.load(
            v_ptr + rows_n * stride_vn + offs_d[None, :] * stride_vd, mask=tile_n, other=0.0
        )
        dk = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
        dv = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
        for start_m in range(0, seqlen, BLOCK_M):
            offs_m = start_m + tl.arange(0, BLOCK_M)
            mask_m = offs_m < seqlen
            tile_m = mask_m[:, None] & mask_d[None, :]
            rows_m = (begin + offs_m)[:, None]
            q = tl.load(
                q_ptr + rows_m * stride_qm + offs_d[None, :] * stride_qd, mask=tile_m, other=0.0
            )
            do = tl.load(
                do_ptr + rows_m * stride_dom + offs_d[None, :] * stride_dod, mask=tile_m, other=0.0
            )
            lse = tl.load(lse_ptr + offs_m, mask=mask_m, other=float("inf"))
            delta = tl.load(delta_ptr + offs_m, mask=mask_m, other=0.0)
            qk = tl.dot(q, tl.trans(k), input_precision=PRECISION)
            p = tl.exp(qk - lse[:, None])
            p = tl.where(mask_m[:, None] & mask_n[None, :], p, 0.0)
            dv += tl.dot(tl.trans(p.to(do_ptr.dtype.element_ty)), do, input_precision=PRECISION)
            dp = tl.dot(do, tl.trans(v), input_precision=PRECISION)
            ds = p * (dp - delta[:, None] * max_seq_len)
            dk += tl.dot(tl.trans(ds.to(q_ptr.dtype.element_ty)), q, input_precision=PRECISION)
        tl.store(
            dk_ptr + pid_h * stride_dkh + rows_n * stride_dkn + offs_d[None, :] * stride_dkd,
            (dk * inv_n).to(dk_ptr.dtype.element_ty),
            mask=tile_n,
        )
        tl.store(
            dv_ptr + pid_h * stride_dvh + rows_n * stride_dvn + offs_d[None, :] * stride_dvd,
            (dv * inv_n).to(dv_ptr.dtype.element_ty),
            mask=tile_n,
        )

    start_q = pid * BLOCK_M
    if start_q < seqlen:
        offs_q = start_q + tl.arange(0, BLOCK_M)
        mask_q = offs_q < seqlen
        tile_q = mask_q[:, None] & mask_d[None, :]
        rows_q = (begin + offs_q)[:, None]
        q = tl.load(
            q_ptr + rows_q * stride_qm + offs_d[None, :] * stride_qd, mask=tile_q, other=0.0
        )
        do = tl.load(
            do_ptr + rows_q * stride_dom + offs_d[None, :] * stride_dod, mask=tile_q, other=0.0
        )
        lse = tl.load(lse_ptr + offs_q, mask=mask_q, other=float("inf"))
        delta = tl.load(delta_ptr + offs_q, mask=mask_q, other=0.0)
        dq = tl.zeros([BLOCK_M, BLOCK_D], dtype=tl.float32)
        for start_k in range(0, seqlen, BLOCK_N):
            offs_k = start_k + tl.arange(0, BLOCK_N)
            mask_k = offs_k < seqlen
            tile_k = mask_k[:, None] & mask_d[None, :]
            rows_k = (begin + offs_k)[:, None]
            kk = tl.load(
                k_ptr + rows_k * stride_kn + offs_d[None, :] * stride_kd, mask=tile_k, other=0.0
            )
            vk = tl.load(
                v_ptr + rows_k * stride_vn + offs_d[None, :] * stride_vd, mask=tile_k, other=0.0
            )
            qk = tl.dot(q, tl.trans(kk), input_precision=PRECISION)
            p = tl.exp(qk - lse[:, None])
            p = tl.where(mask_q[:, None] & mask_k[None, :], p, 0.0)
            dp = tl.dot(do, tl.trans(vk), input_precision=PRECISION)
            ds = p * (dp - delta[:, None] * max_seq_len)
            dq += tl.dot(ds.to(k_ptr.dtype.element_ty), kk, input_precision=PRECISION)
        tl.store(
            dq_ptr + pid_h * stride_dqh + rows_q * stride_dqm + offs_d[None, :] * stride_dqd,
            (dq * inv_n).to(dq_ptr.dtype.element_ty),
            mask=tile_q,
        )


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_h2_n256_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "H": 2, "max_seq_len": 256, "D": 64},
                "config": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_h2_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "H": 2, "max_seq_len": 256, "D": 128},
                "config": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
            },
            {
                "case": "b256_h2_n2048_d128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "H": 2, "max_seq_len": 2048, "D": 128},
                "config": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
            },
            {
                "case": "b512_h4_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "H": 4, "max_seq_len": 512, "D": 64},
                "config": {"BLOCK_M": 64, "BLOCK_N": 64, "num_warps": 4, "num_stages": 2},
            },
        ],
        "bwd_preprocess": [
            {
                "case": "b1024_h2_n256_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "H": 2, "max_seq_len": 256, "D": 64},
                "config": {"BLOCK_M": 32, "BLOCK_D": 32, "num_warps": 4},
            },
            {
                "case": "b2048_h2_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "H": 2, "max_seq_len": 256, "D": 128},
                "config": {"BLOCK_M": 16, "BLOCK_D": 64, "num_warps": 4},
            },
            {
                "case": "b256_h2_n2048_d128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "H": 2, "max_seq_len": 2048, "D": 128},
                "config": {"BLOCK_M": 16, "BLOCK_D": 64, "num_warps": 4},
            },
            {
                "case": "b512_h4_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "H": 4, "max_seq_len": 512, "D": 64},
                "config": {"BLOCK_M": 32, "BLOCK_D": 32, "num_warps": 4},
            },
        ],
        "fwd": [
            {
                "case": "b1024_h2_n256_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "H": 2, "max_seq_len": 256, "D": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b2048_h2_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "H": 2, "max_seq_len": 256, "D": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 2,
                },
            },
            {
                "case": "b256_h2_n2048_d128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "H": 2, "max_seq_len": 2048, "D": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 2,
                },
            },
            {
                "case": "b512_h4_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "H": 4, "max_seq_len": 512, "D": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_D": 64,
                    "num_warps": 4,
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
_CONSTEXPRS = ("BLOCK_D", "BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len", "BLOCK_D": "D"},
    "bwd_preprocess": {"BLOCK_M": "max_seq_len", "BLOCK_D": "D"},
    "bwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
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
    """Upstream's launch: BLOCK_M = BLOCK_N = 32, BLOCK_D = D padded to a power of two (>= 16),
    Triton's num_warps=4, num_stages=3."""
    if kernel == "fwd":
        return {
            "BLOCK_M": 32,
            "BLOCK_N": 32,
            "BLOCK_D": _block_d(shape["D"]),
            "num_warps": 4,
            "num_stages": 3,
        }
    if kernel == "bwd_preprocess":
        return {"BLOCK_M": 32, "BLOCK_D": _block_d(shape["D"]), "num_warps": 4}
    return {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3}


def _shape(batch: int, heads: int, max_seq_len: int, d: int) -> dict:
    return {"B": batch, "H": heads, "max_seq_len": int(max_seq_len), "D": d}


def _check_inputs(q, k, v, offsets):
    if q.dim() != 3 or q.shape != k.shape or q.shape != v.shape:
        raise ValueError(
            f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} must all be [H, sum_L, D]"
        )
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError("q, k and v must share one dtype")
    _check_offsets(offsets, q.size(1))


def multi_head_jagged_flash_attention_fwd(
    q, k, v, offsets, max_seq_len, allow_tf32=False, *, config=None, check=False, out_dtype=None
):
    """(out [H, sum_L, D], lse [H, sum_L] fp32). Rows past max_seq_len get out = 0, lse = -inf.

    `out_dtype=torch.float32` keeps the output unrounded for the backward's delta = rowsum(out * dout).
    """
    if _checked(check):
        _check_inputs(q, k, v, offsets)
    heads, _, d = q.shape
    batch = offsets.numel() - 1
    shape = _shape(batch, heads, max_seq_len, d)
    blocks, options = _configure("fwd", config, shape, q)
    out = torch.zeros(q.shape, dtype=out_dtype or q.dtype, device=q.device)
    lse = torch.full(q.shape[:2], float("-inf"), dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(max_seq_len, blocks["BLOCK_M"]), batch * heads)
    _fwd_kernel[grid](
        q, k, v, offsets, out, lse, heads, max_seq_len, d,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), out.stride(0), out.stride(1), out.stride(2),
        lse.stride(0),
        PRECISION=_precision(allow_tf32, q.device), NEXT_D=_block_d(d), **blocks, **options,
    )  # fmt: skip
    return out, lse


def bwd_preprocess(out, dout, offsets, max_seq_len, *, config=None):
    """delta [H, sum_L] fp32: the row-wise dot product of out and dout (rows past max_seq_len: 0)."""
    heads, rows, d = out.shape
    batch = offsets.numel() - 1
    shape = _shape(batch, heads, max_seq_len, d)
    # `out` may be the forward's fp32 output: the case (and its frozen config) has dout's dtype.
    blocks, options = _configure("bwd_preprocess", config, shape, dout)
    delta = torch.zeros(heads, rows, dtype=torch.float32, device=out.device)
    grid = (triton.cdiv(max_seq_len, blocks["BLOCK_M"]), batch * heads)
    _bwd_preprocess_kernel[grid](
        out, dout, offsets, delta, heads, max_seq_len, d,
        out.stride(0), out.stride(1), out.stride(2), dout.stride(0), dout.stride(1),
        dout.stride(2), delta.stride(0),
        **blocks, **options,
    )  # fmt: skip
    return delta


def bwd(q, k, v, offsets, max_seq_len, dout, lse, delta, allow_tf32=False, *, config=None):
    """(dq, dk, dv); rows past max_seq_len get zeros. Needs BLOCK_M == BLOCK_N (see the kernel)."""
    heads, _, d = q.shape
    batch = offsets.numel() - 1
    shape = _shape(batch, heads, max_seq_len, d)
    blocks, options = _configure("bwd", config, shape, q)
    if blocks["BLOCK_M"] != blocks["BLOCK_N"]:
        raise ValueError(
            f"bwd needs BLOCK_M == BLOCK_N (its dq part), got {blocks['BLOCK_M']} and {blocks['BLOCK_N']}"
        )
    # The kernel walks lse and delta rows with unit stride.
    lse, delta = lse.contiguous(), delta.contiguous()
    dq, dk, dv = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    grid = (triton.cdiv(max_seq_len, blocks["BLOCK_N"]), batch * heads)
    _bwd_kernel[grid](
        q, k, v, offsets, dout, lse, delta, dq, dk, dv, heads, max_seq_len, d,
        q.stride(0), q.stride(1), q.stride(2), k.stride(0), k.stride(1), k.stride(2),
        v.stride(0), v.stride(1), v.stride(2), dout.stride(0), dout.stride(1), dout.stride(2),
        lse.stride(0), delta.stride(0), dq.stride(0), dq.stride(1), dq.stride(2),
        dk.stride(0), dk.stride(1), dk.stride(2), dv.stride(0), dv.stride(1), dv.stride(2),
        PRECISION=_precision(allow_tf32, q.device), BLOCK_D=_block_d(d), **blocks, **options,
    )  # fmt: skip
    return dq, dk, dv


def multi_head_jagged_flash_attention_bwd(
    q, k, v, out, offsets, dout, lse, max_seq_len, allow_tf32=False, *, configs=None, check=False
):
    """(dq, dk, dv); `configs` maps kernel names to explicit configs. `out` is best the fp32
    output of the forward (see `out_dtype` there)."""
    configs = configs or {}
    if _checked(check):
        _check_inputs(q, k, v, offsets)
    dout = dout.contiguous()
    delta = bwd_preprocess(out, dout, offsets, max_seq_len, config=configs.get("bwd_preprocess"))
    return bwd(
        q, k, v, offsets, max_seq_len, dout, lse, delta, allow_tf32, config=configs.get("bwd")
    )


class MultiHeadJaggedFlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, offsets, max_seq_len, allow_tf32=True):
        out, lse = multi_head_jagged_flash_attention_fwd(
            q, k, v, offsets, max_seq_len, allow_tf32, out_dtype=torch.float32
        )
        ctx.save_for_backward(q, k, v, offsets, out, lse)
        ctx.max_seq_len = max_seq_len
        ctx.allow_tf32 = allow_tf32
        return out.to(q.dtype)

    @staticmethod
    def backward(ctx, dout):
        q, k, v, offsets, out, lse = ctx.saved_tensors
        dq, dk, dv = multi_head_jagged_flash_attention_bwd(
            q, k, v, out, offsets, dout, lse, ctx.max_seq_len, ctx.allow_tf32
        )
        return dq, dk, dv, None, None, None


def multi_head_jagged_flash_attention(
    q_weights, k_weights, v_weights, offsets, max_seq_len, allow_tf32=True
):
    """Same signature as upstream: q, k, v [H, sum_L, D] jagged."""
    q, k, v, offsets = (x.contiguous() for x in (q_weights, k_weights, v_weights, offsets))
    return MultiHeadJaggedFlashAttention.apply(q, k, v, offsets, max_seq_len, allow_tf32)
