# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's jagged_dense_flash_attention (pytorch/FBGEMM, see README.md), written
# here. Softmax runs over the jagged (sequence) axis for each of the T dense positions:
#   out[b, t] = sum_l softmax_l(q[b, l] . k[b, :, t] + bias[b, l, t]) * v[b, l]
# Differences from upstream: every dtype in the backward too (fp32 accumulation, operands in the
# input dtype), any D (padded to a power of two), lse kept in fp32, outputs fully written by the
# kernels (no zero-fill passes), tunables passed per launch from the frozen configs below.
"""Triton port of jagged_dense_flash_attention: forward, and the backward's three kernels."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(
    q_ptr, k_ptr, v_ptr, ab_ptr, o_ptr, lse_ptr, offsets_ptr, max_seq_len, D, T,
    stride_ql, stride_qd, stride_kb, stride_kd, stride_kt, stride_vl, stride_vd,
    stride_ab_b, stride_ab_l, stride_ab_t, stride_ob, stride_ot, stride_od,
    PRECISION: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    pid_t = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    length = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)

    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    mask_t = offs_t < T
    mask_d = offs_d < D
    k = tl.load(
        k_ptr + pid_b * stride_kb + offs_d[:, None] * stride_kd + offs_t[None, :] * stride_kt,
        mask=mask_d[:, None] & mask_t[None, :],
        other=0.0,
    )
    m_i = tl.full([BLOCK_T], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_T], dtype=tl.float32)
    acc = tl.zeros([BLOCK_T, BLOCK_D], dtype=tl.float32)
    for start_l in range(0, length, BLOCK_L):
        offs_l = start_l + tl.arange(0, BLOCK_L)
        mask_l = offs_l < length
        rows = (begin + offs_l)[:, None]
        q = tl.load(
            q_ptr + rows * stride_ql + offs_d[None, :] * stride_qd,
            mask=mask_l[:, None] & mask_d[None, :],
            other=0.0,
        )
        bias = tl.load(
            ab_ptr
            + pid_b * stride_ab_b
            + offs_l[:, None] * stride_ab_l
            + offs_t[None, :] * stride_ab_t,
            mask=mask_l[:, None] & mask_t[None, :],
            other=0.0,
        )
        s = tl.dot(q, k, input_precision=PRECISION) + bias.to(tl.float32)
        s = tl.where(mask_l[:, None], s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=0))
        p = tl.exp(s - m_new[None, :])
        alpha = tl.exp(m_i - m_new)
        l_i = alpha * l_i + tl.sum(p, axis=0)
        v = tl.load(
            v_ptr + rows * stride_vl + offs_d[None, :] * stride_vd,
            mask=mask_l[:, None] & mask_d[None, :],
            other=0.0,
        )
        pv = tl.dot(tl.trans(p.to(v_ptr.dtype.element_ty)), v, input_precision=PRECISION)
        acc = acc * alpha[:, None] + pv
        m_i = m_new

    has_rows = l_i > 0
    out = acc / tl.where(has_rows, l_i, 1.0)[:, None]
    lse = tl.where(has_rows, m_i + tl.log(tl.where(has_rows, l_i, 1.0)), float("-inf"))
    tl.store(lse_ptr + pid_b * T + offs_t, lse, mask=mask_t)
    tl.store(
        o_ptr + pid_b * stride_ob + offs_t[:, None] * stride_ot + offs_d[None, :] * stride_od,
        out.to(o_ptr.dtype.element_ty),
        mask=mask_t[:, None] & mask_d[None, :],
    )


@triton.jit
def _bwd_preprocess_kernel(
    o_ptr, do_ptr, delta_ptr, D, T,
    stride_ob, stride_ot, stride_od, stride_dob, stride_dot, stride_dod,
    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """delta[b, t] = sum_d out[b, t, d] * dout[b, t, d]; BLOCK_D may be smaller than D."""
    pid_t = tl.program_id(0)
    pid_b = tl.program_id(1)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    mask_t = offs_t < T
    delta = tl.zeros([BLOCK_T], dtype=tl.float32)
    for start_d in range(0, D, BLOCK_D):
        offs_d = start_d + tl.arange(0, BLOCK_D)
        mask = mask_t[:, None] & (offs_d < D)[None, :]
        o = tl.load(
            o_ptr + pid_b * stride_ob + offs_t[:, None] * stride_ot + offs_d[None, :] * stride_od,
            mask=mask,
            other=0.0,
        )
        do = tl.load(
            do_ptr
            + pid_b * stride_dob
            + offs_t[:, None] * stride_dot
            + offs_d[None, :] * stride_dod,
            mask=mask,
            other=0.0,
        )
        delta += tl.sum(o.to(tl.float32) * do.to(tl.float32), axis=1)
    tl.store(delta_ptr + pid_b * T + offs_t, delta, mask=mask_t)


@triton.jit
def _bwd_dv_db_dq_kernel(
    q_ptr, k_ptr, v_ptr, ab_ptr, offsets_ptr, do_ptr, lse_ptr, delta_ptr,
    dq_ptr, dv_ptr, db_ptr, max_seq_len, N, D, T,
    stride_ql, stride_qd, stride_kb, stride_kd, stride_kt, stride_vl, stride_vd,
    stride_ab_b, stride_ab_l, stride_ab_t, stride_dob, stride_dot, stride_dod,
    stride_dql, stride_dqd, stride_dvl, stride_dvd, stride_db_b, stride_db_l, stride_db_t,
    PRECISION: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """One BLOCK_L slice of one sequence: dv and dq for its rows, dbias for its rows of all T."""
    pid_l = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    start_l = pid_l * BLOCK_L
    offs_l = start_l + tl.arange(0, BLOCK_L)
    offs_d = tl.arange(0, BLOCK_D)
    mask_l = offs_l < seqlen
    mask_d = offs_d < D
    db_rows = db_ptr + pid_b * stride_db_b + offs_l[:, None] * stride_db_l
    if start_l >= seqlen:
        # Rows past the sequence: dbias is zero there, and nothing else to do.
        for start_t in range(0, T, BLOCK_T):
            offs_t = start_t + tl.arange(0, BLOCK_T)
            zeros = tl.zeros([BLOCK_L, BLOCK_T], dtype=tl.float32)
            tl.store(
                db_rows + offs_t[None, :] * stride_db_t,
                zeros.to(db_ptr.dtype.element_ty),
                mask=(offs_l < N)[:, None] & (offs_t < T)[None, :],
            )
    else:
        rows = (begin + offs_l)[:, None]
        row_mask = mask_l[:, None] & mask_d[None, :]
        q = tl.load(
            q_ptr + rows * stride_ql + offs_d[None, :] * stride_qd, mask=row_mask, other=0.0
        )
        v = tl.load(
            v_ptr + rows * stride_vl + offs_d[None, :] * stride_vd, mask=row_mask, other=0.0
        )
        dq = tl.zeros([BLOCK_L, BLOCK_D], dtype=tl.float32)
        dv = tl.zeros([BLOCK_L, BLOCK_D], dtype=tl.float32)
        for start_t in range(0, T, BLOCK_T):
            offs_t = start_t + tl.arange(0, BLOCK_T)
            mask_t = offs_t < T
            k = tl.load(
                k_ptr
                + pid_b * stride_kb
                + offs_d[:, None] * stride_kd
                + offs_t[None, :] * stride_kt,
                mask=mask_d[:, None] & mask_t[None, :],
                other=0.0,
            )
            bias = tl.load(
                ab_ptr
                + pid_b * stride_ab_b
                + offs_l[:, None] * stride_ab_l
                + offs_t[None, :] * stride_ab_t,
                mask=mask_l[:, None] & mask_t[None, :],
                other=0.0,
            )
            lse = tl.load(lse_ptr + pid_b * T + offs_t, mask=mask_t, other=0.0)
            delta = tl.load(delta_ptr + pid_b * T + offs_t, mask=mask_t, other=0.0)
            do = tl.load(
                do_ptr
                + pid_b * stride_dob
                + offs_t[:, None] * stride_dot
                + offs_d[None, :] * stride_dod,
                mask=mask_t[:, None] & mask_d[None, :],
                other=0.0,
            )
            s = tl.dot(q, k, input_precision=PRECISION) + bias.to(tl.float32)
            valid = mask_l[:, None] & mask_t[None, :]
            p = tl.where(valid, tl.exp(s - lse[None, :]), 0.0)
            dv += tl.dot(p.to(do_ptr.dtype.element_ty), do, input_precision=PRECISION)
            dp = tl.dot(v, tl.trans(do), input_precision=PRECISION)
            ds = p * (dp - delta[None, :])
            tl.store(
                db_rows + offs_t[None, :] * stride_db_t,
                ds.to(db_ptr.dtype.element_ty),
                mask=(offs_l < N)[:, None] & mask_t[None, :],
            )
            dq += tl.dot(ds.to(k_ptr.dtype.element_ty), tl.trans(k), input_precision=PRECISION)
        tl.store(
            dq_ptr + rows * stride_dql + offs_d[None, :] * stride_dqd,
            dq.to(dq_ptr.dtype.element_ty),
            mask=row_mask,
        )
        tl.store(
            dv_ptr + rows * stride_dvl + offs_d[None, :] * stride_dvd,
            dv.to(dv_ptr.dtype.element_ty),
            mask=row_mask,
        )


@triton.jit
def _bwd_dk_kernel(
    q_ptr, k_ptr, v_ptr, ab_ptr, offsets_ptr, do_ptr, lse_ptr, delta_ptr, dk_ptr, max_seq_len, D, T,
    stride_ql, stride_qd, stride_kb, stride_kd, stride_kt, stride_vl, stride_vd,
    stride_ab_b, stride_ab_l, stride_ab_t, stride_dob, stride_dot, stride_dod,
    stride_dkb, stride_dkd, stride_dkt,
    PRECISION: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """dk[b, :, t-block] = sum over the sequence of q^T ds."""
    pid_t = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    offs_t = pid_t * BLOCK_T + tl.arange(0, BLOCK_T)
    offs_d = tl.arange(0, BLOCK_D)
    mask_t = offs_t < T
    mask_d = offs_d < D
    k = tl.load(
        k_ptr + pid_b * stride_kb + offs_d[:, None] * stride_kd + offs_t[None, :] * stride_kt,
        mask=mask_d[:, None] & mask_t[None, :],
        other=0.0,
    )
    do = tl.load(
        do_ptr + pid_b * stride_dob + offs_t[:, None] * stride_dot + offs_d[None, :] * stride_dod,
        mask=mask_t[:, None] & mask_d[None, :],
        other=0.0,
    )
    lse = tl.load(lse_ptr + pid_b * T + offs_t, mask=mask_t, other=0.0)
    delta = tl.load(delta_ptr + pid_b * T + offs_t, mask=mask_t, other=0.0)
    dk = tl.zeros([BLOCK_D, BLOCK_T], dtype=tl.float32)
    for start_l in range(0, seqlen, BLOCK_L):
        offs_l = start_l + tl.arange(0, BLOCK_L)
        mask_l = offs_l < seqlen
        rows = (begin + offs_l)[:, None]
        row_mask = mask_l[:, None] & mask_d[None, :]
        q = tl.load(
            q_ptr + rows * stride_ql + offs_d[None, :] * stride_qd, mask=row_mask, other=0.0
        )
        v = tl.load(
            v_ptr + rows * stride_vl + offs_d[None, :] * stride_vd, mask=row_mask, other=0.0
        )
        bias = tl.load(
            ab_ptr
            + pid_b * stride_ab_b
            + offs_l[:, None] * stride_ab_l
            + offs_t[None, :] * stride_ab_t,
            mask=mask_l[:, None] & mask_t[None, :],
            other=0.0,
        )
        s = tl.dot(q, k, input_precision=PRECISION) + bias.to(tl.float32)
        p = tl.where(mask_l[:, None] & mask_t[None, :], tl.exp(s - lse[None, :]), 0.0)
        dp = tl.dot(v, tl.trans(do), input_precision=PRECISION)
        ds = p * (dp - delta[None, :])
        dk += tl.dot(tl.trans(q), ds.to(q_ptr.dtype.element_ty), input_precision=PRECISION)
    tl.store(
        dk_ptr + pid_b * stride_dkb + offs_d[:, None] * stride_dkd + offs_t[None, :] * stride_dkt,
        dk.to(dk_ptr.dtype.element_ty),
        mask=mask_d[:, None] & mask_t[None, :],
    )


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd_dk": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {"BLOCK_T": 64, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_n512_d256_t32_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256, "T": 32},
                "config": {"BLOCK_T": 32, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2},
            },
            {
                "case": "b256_n2048_d128_t256_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 128, "T": 256},
                "config": {"BLOCK_T": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2},
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {"BLOCK_T": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2},
            },
        ],
        "bwd_dv_db_dq": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {"BLOCK_T": 32, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_n512_d256_t32_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256, "T": 32},
                "config": {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 4, "num_stages": 2},
            },
            {
                "case": "b256_n2048_d128_t256_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 128, "T": 256},
                "config": {"BLOCK_T": 32, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {"BLOCK_T": 32, "BLOCK_L": 64, "num_warps": 4, "num_stages": 3},
            },
        ],
        "bwd_preprocess": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {"BLOCK_T": 16, "BLOCK_D": 128, "num_warps": 8},
            },
            {
                "case": "b2048_n512_d256_t32_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256, "T": 32},
                "config": {"BLOCK_T": 16, "BLOCK_D": 256, "num_warps": 8},
            },
            {
                "case": "b256_n2048_d128_t256_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 128, "T": 256},
                "config": {"BLOCK_T": 16, "BLOCK_D": 128, "num_warps": 8},
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {"BLOCK_T": 32, "BLOCK_D": 64, "num_warps": 4},
            },
        ],
        "fwd": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {"BLOCK_T": 64, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_n512_d256_t32_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256, "T": 32},
                "config": {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b256_n2048_d128_t256_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 128, "T": 256},
                "config": {"BLOCK_T": 64, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 2, "num_stages": 3},
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
_CONSTEXPRS = ("BLOCK_D", "BLOCK_L", "BLOCK_T")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_T": "T", "BLOCK_L": "max_seq_len"},
    "bwd_preprocess": {"BLOCK_T": "T", "BLOCK_D": "D"},
    "bwd_dv_db_dq": {"BLOCK_T": "T", "BLOCK_L": "max_seq_len"},
    "bwd_dk": {"BLOCK_T": "T", "BLOCK_L": "max_seq_len"},
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
    """Upstream's launch: BLOCK_T = BLOCK_L = 32, BLOCK_D = D, Triton's num_warps=4, num_stages=3."""
    if kernel == "bwd_preprocess":
        return {"BLOCK_T": 32, "BLOCK_D": _block_d(shape["D"]), "num_warps": 4}
    return {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3}


def _shape(batch: int, max_seq_len: int, d: int, t: int) -> dict:
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d, "T": t}


def _check_inputs(q, k, v, attn_bias, offsets, max_seq_len):
    if q.dim() != 2 or k.dim() != 3 or attn_bias.dim() != 3:
        raise ValueError("expected q, v: [sum_L, D], k: [B, D, T], attn_bias: [B, N, T]")
    batch, d, t = k.shape
    if q.shape != v.shape or q.size(1) != d:
        raise ValueError(f"q {tuple(q.shape)} and v {tuple(v.shape)} must both be [sum_L, {d}]")
    if attn_bias.size(0) != batch or attn_bias.size(2) != t or attn_bias.size(1) < max_seq_len:
        raise ValueError(
            f"attn_bias {tuple(attn_bias.shape)} must be [{batch}, >= {max_seq_len}, {t}]"
        )
    if offsets.numel() != batch + 1:
        raise ValueError(f"offsets has {offsets.numel()} entries, expected B + 1 = {batch + 1}")
    if not (q.dtype == k.dtype == v.dtype == attn_bias.dtype):
        raise ValueError("q, k, v and attn_bias must share one dtype")
    _check_offsets(offsets, q.size(0))


def jagged_dense_flash_attention_fwd(
    q,
    k,
    v,
    attn_bias,
    offsets,
    max_seq_len,
    allow_tf32=False,
    *,
    config=None,
    check=False,
    out_dtype=None,
):
    """(out [B, T, D], lse [B, T] fp32); an empty sequence gives zeros and lse = -inf.

    `out_dtype=torch.float32` keeps the output unrounded for the backward: its delta = rowsum(out *
    dout) cancels against dp, and a bf16-rounded out dominates the error of dq, dk and dbias.
    """
    if _checked(check):
        _check_inputs(q, k, v, attn_bias, offsets, max_seq_len)
    batch, d, t = k.shape
    shape = _shape(batch, max_seq_len, d, t)
    blocks, options = _configure("fwd", config, shape, q)
    out = torch.empty(batch, t, d, dtype=out_dtype or q.dtype, device=q.device)
    lse = torch.empty(batch, t, dtype=torch.float32, device=q.device)
    grid = (triton.cdiv(t, blocks["BLOCK_T"]), batch)
    _fwd_kernel[grid](
        q, k, v, attn_bias, out, lse, offsets, max_seq_len, d, t,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1),
        attn_bias.stride(0), attn_bias.stride(1), attn_bias.stride(2),
        out.stride(0), out.stride(1), out.stride(2),
        PRECISION=_precision(allow_tf32, q.device), BLOCK_D=_block_d(d), **blocks, **options,
    )  # fmt: skip
    return out, lse


def bwd_preprocess(out, dout, max_seq_len, *, config=None):
    """delta [B, T] fp32: the row-wise dot product of out and dout."""
    batch, t, d = out.shape
    shape = _shape(batch, max_seq_len, d, t)
    # `out` may be the forward's fp32 output: the case (and its frozen config) has dout's dtype.
    blocks, options = _configure("bwd_preprocess", config, shape, dout)
    delta = torch.empty(batch, t, dtype=torch.float32, device=out.device)
    grid = (triton.cdiv(t, blocks["BLOCK_T"]), batch)
    _bwd_preprocess_kernel[grid](
        out, dout, delta, d, t,
        out.stride(0), out.stride(1), out.stride(2), dout.stride(0), dout.stride(1), dout.stride(2),
        **blocks, **options,
    )  # fmt: skip
    return delta


def bwd_dv_db_dq(
    q, k, v, attn_bias, offsets, max_seq_len, dout, lse, delta, allow_tf32=False, *, config=None
):
    """(dq, dv, dbias): rows of a sequence past max_seq_len get zero dq and dv."""
    batch, d, t = k.shape
    shape = _shape(batch, max_seq_len, d, t)
    blocks, options = _configure("bwd_dv_db_dq", config, shape, q)
    dq = torch.zeros_like(q)
    dv = torch.zeros_like(v)
    dbias = torch.empty_like(attn_bias)
    n = attn_bias.size(1)
    grid = (triton.cdiv(n, blocks["BLOCK_L"]), batch)
    _bwd_dv_db_dq_kernel[grid](
        q, k, v, attn_bias, offsets, dout, lse, delta, dq, dv, dbias, max_seq_len, n, d, t,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1),
        attn_bias.stride(0), attn_bias.stride(1), attn_bias.stride(2),
        dout.stride(0), dout.stride(1), dout.stride(2), dq.stride(0), dq.stride(1),
        dv.stride(0), dv.stride(1), dbias.stride(0), dbias.stride(1), dbias.stride(2),
        PRECISION=_precision(allow_tf32, q.device), BLOCK_D=_block_d(d), **blocks, **options,
    )  # fmt: skip
    return dq, dv, dbias


def bwd_dk(
    q, k, v, attn_bias, offsets, max_seq_len, dout, lse, delta, allow_tf32=False, *, config=None
):
    """dk [B, D, T]; zero for an empty sequence."""
    batch, d, t = k.shape
    shape = _shape(batch, max_seq_len, d, t)
    blocks, options = _configure("bwd_dk", config, shape, q)
    dk = torch.empty_like(k)
    grid = (triton.cdiv(t, blocks["BLOCK_T"]), batch)
    _bwd_dk_kernel[grid](
        q, k, v, attn_bias, offsets, dout, lse, delta, dk, max_seq_len, d, t,
        q.stride(0), q.stride(1), k.stride(0), k.stride(1), k.stride(2), v.stride(0), v.stride(1),
        attn_bias.stride(0), attn_bias.stride(1), attn_bias.stride(2),
        dout.stride(0), dout.stride(1), dout.stride(2), dk.stride(0), dk.stride(1), dk.stride(2),
        PRECISION=_precision(allow_tf32, q.device), BLOCK_D=_block_d(d), **blocks, **options,
    )  # fmt: skip
    return dk


def jagged_dense_flash_attention_bwd(
    q,
    k,
    v,
    out,
    lse,
    dout,
    attn_bias,
    offsets,
    max_seq_len,
    allow_tf32=False,
    *,
    configs=None,
    check=False,
):
    """(dq, dk, dv, dbias); `configs` maps kernel names to explicit configs.

    `out` is best the fp32 output of the forward (see `out_dtype` there).
    """
    configs = configs or {}
    if _checked(check):
        _check_inputs(q, k, v, attn_bias, offsets, max_seq_len)
    dout = dout.contiguous()
    delta = bwd_preprocess(out, dout, max_seq_len, config=configs.get("bwd_preprocess"))
    args = (q, k, v, attn_bias, offsets, max_seq_len, dout, lse, delta, allow_tf32)
    dq, dv, dbias = bwd_dv_db_dq(*args, config=configs.get("bwd_dv_db_dq"))
    dk = bwd_dk(*args, config=configs.get("bwd_dk"))
    return dq, dk, dv, dbias


class JaggedDenseFlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, attn_bias, offsets, max_seq_len, allow_tf32=False):
        out, lse = jagged_dense_flash_attention_fwd(
            q, k, v, attn_bias, offsets, max_seq_len, allow_tf32
        )
        ctx.save_for_backward(q, k, v, attn_bias, offsets, out, lse)
        ctx.max_seq_len = max_seq_len
        ctx.allow_tf32 = allow_tf32
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, attn_bias, offsets, out, lse = ctx.saved_tensors
        dq, dk, dv, dbias = jagged_dense_flash_attention_bwd(
            q, k, v, out, lse, dout, attn_bias, offsets, ctx.max_seq_len, ctx.allow_tf32
        )
        return dq, dk, dv, dbias, None, None, None


def jagged_dense_flash_attention(q, k, v, attn_bias, offsets, max_seq_len, allow_tf32=True):
    """Same signature as upstream: q, v [sum_L, D] jagged, k [B, D, T], attn_bias [B, N, T]."""
    q, k, v, attn_bias, offsets = (x.contiguous() for x in (q, k, v, attn_bias, offsets))
    return JaggedDenseFlashAttention.apply(q, k, v, attn_bias, offsets, max_seq_len, allow_tf32)
