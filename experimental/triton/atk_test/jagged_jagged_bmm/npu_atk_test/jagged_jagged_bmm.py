# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's Triton jagged_jagged_bmm (pytorch/FBGEMM, sll/triton/triton_jagged_bmm.py,
# see README.md), written here: out[b] = x[rows of b]^T @ y[rows of b] over the first max_seq_len
# rows of each sequence. The backward runs the jagged x dense kernel twice, as upstream's autograd
# Function does: dx = y @ dout^T and dy = x @ dout per sequence.
# Differences from upstream: fp32 accumulation stored in the input dtype for fp32/fp16/bf16, any
# D and T (masked), tunables passed per launch from the frozen configs below (upstream: fixed).
"""Triton port of jagged_jagged_bmm: forward and its backward's two kernels."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_dense_bmm_kernel(
    a_ptr, offsets_ptr, b_ptr, c_ptr, max_seq_len, N, K,
    stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_cm, stride_cn,
    PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[rows of b] = a[rows of b] @ b_dense[b]: a [sum_L, K] jagged, b_dense [B, K, N]."""
    pid = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    # Programs past the end of a short sequence have nothing to do (the grid covers max_seq_len).
    if pid_m * BLOCK_M < seqlen:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        mask_m = offs_m < seqlen
        mask_n = offs_n < N
        rows = (begin + offs_m)[:, None]
        b_cols = b_ptr + pid_b * stride_bb + offs_n[None, :] * stride_bn
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start_k in range(0, K, BLOCK_K):
            ks = start_k + offs_k
            mask_k = ks < K
            a = tl.load(
                a_ptr + rows * stride_am + ks[None, :] * stride_ak,
                mask=mask_m[:, None] & mask_k[None, :],
                other=0.0,
            )
            b = tl.load(
                b_cols + ks[:, None] * stride_bk,
                mask=mask_k[:, None] & mask_n[None, :],
                other=0.0,
            )
            acc += tl.dot(a, b, input_precision=PRECISION)
        tl.store(
            c_ptr + rows * stride_cm + offs_n[None, :] * stride_cn,
            acc.to(c_ptr.dtype.element_ty),
            mask=mask_m[:, None] & mask_n[None, :],
        )


@triton.jit
def _jagged_jagged_bmm_kernel(
    a_ptr, offsets_ptr, b_ptr, c_ptr, max_seq_len, M, N,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cb, stride_cm, stride_cn,
    PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[b] = a[:, rows of b] @ b_jagged[rows of b]: a [M, sum_L], b_jagged [sum_L, N], c [B, M, N].

    The reduction runs over the first min(len_b, max_seq_len) rows; an empty sequence gives zeros.
    """
    pid = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    num_n = tl.cdiv(N, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M
    mask_n = offs_n < N
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start_k in range(0, seqlen, BLOCK_K):
        ks = start_k + offs_k
        mask_k = ks < seqlen
        rows = begin + ks
        a = tl.load(
            a_ptr + offs_m[:, None] * stride_am + rows[None, :] * stride_ak,
            mask=mask_m[:, None] & mask_k[None, :],
            other=0.0,
        )
        b = tl.load(
            b_ptr + rows[:, None] * stride_bk + offs_n[None, :] * stride_bn,
            mask=mask_k[:, None] & mask_n[None, :],
            other=0.0,
        )
        acc += tl.dot(a, b, input_precision=PRECISION)
    tl.store(
        c_ptr + pid_b * stride_cb + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
        acc.to(c_ptr.dtype.element_ty),
        mask=mask_m[:, None] & mask_n[None, :],
    )


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd_dx": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b1024_n512_d256_t64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
        ],
        "bwd_dy": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b1024_n512_d256_t64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 2,
                    "num_stages": 3,
                },
            },
        ],
        "fwd": [
            {
                "case": "b1024_n256_d128_t128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 256, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b1024_n512_d256_t64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256, "T": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b256_n4096_d128_t128_fp16",
                "dtype": "float16",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128, "T": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 64,
                    "BLOCK_K": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n1024_d64_t256_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 64, "T": 256},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
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
_CONSTEXPRS = ("BLOCK_K", "BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_M": "D", "BLOCK_N": "T", "BLOCK_K": "max_seq_len"},
    "bwd_dx": {"BLOCK_M": "max_seq_len", "BLOCK_N": "D", "BLOCK_K": "T"},
    "bwd_dy": {"BLOCK_M": "max_seq_len", "BLOCK_N": "T", "BLOCK_K": "D"},
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


def _block_size(n: int) -> int:
    """Upstream's set_block_size: 64 above 64, 32 above 16, else 16."""
    return 64 if n > 64 else 32 if n > 16 else 16


def _block_m(max_seq_len: int) -> int:
    """Upstream's BLOCK_SIZE_M of jagged_dense_bmm: 32 below a max_seq_len of 50, else 64."""
    return 32 if max_seq_len < 50 else 64


def _dense_bmm_default(max_seq_len: int, n: int, k: int) -> dict:
    return {
        "BLOCK_M": _block_m(max_seq_len),
        "BLOCK_N": _block_size(n),
        "BLOCK_K": _block_size(k),
        "num_warps": 4,
        "num_stages": 3,
    }


def _jagged_bmm_default(m: int, n: int) -> dict:
    return {
        "BLOCK_M": _block_size(m),
        "BLOCK_N": _block_size(n),
        "BLOCK_K": 32,
        "num_warps": 4,
        "num_stages": 3,
    }


# <<< autotune generated block <<<


def _shape(batch: int, max_seq_len: int, d: int, t: int) -> dict:
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d, "T": t}


def _dense_bmm(kernel, shape, a, b, offsets, max_seq_len, allow_tf32, config):
    """[sum_L, K] jagged @ [B, K, N] dense -> [sum_L, N] jagged; rows past max_seq_len are 0."""
    batch, k, n = b.shape
    blocks, options = _configure(kernel, config, shape, a)
    # Zeros: rows past max_seq_len belong to no program (upstream zero-fills as well).
    c = torch.zeros(a.size(0), n, dtype=a.dtype, device=a.device)
    if max_seq_len <= 0 or c.numel() == 0:
        return c
    grid = (triton.cdiv(max_seq_len, blocks["BLOCK_M"]) * triton.cdiv(n, blocks["BLOCK_N"]), batch)
    _jagged_dense_bmm_kernel[grid](
        a, offsets, b, c, max_seq_len, n, k,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), b.stride(2), c.stride(0), c.stride(1),
        PRECISION=_precision(allow_tf32, a.device), **blocks, **options,
    )  # fmt: skip
    return c


def _jagged_bmm(kernel, shape, a, b, offsets, max_seq_len, allow_tf32, config):
    """[M, sum_L] @ [sum_L, N] jagged -> [B, M, N] dense, over the first max_seq_len rows."""
    m, n = a.size(0), b.size(1)
    batch = offsets.numel() - 1
    blocks, options = _configure(kernel, config, shape, a)
    c = torch.empty(batch, m, n, dtype=a.dtype, device=a.device)
    if c.numel() == 0:
        return c
    grid = (triton.cdiv(m, blocks["BLOCK_M"]) * triton.cdiv(n, blocks["BLOCK_N"]), batch)
    _jagged_jagged_bmm_kernel[grid](
        a, offsets, b, c, max(int(max_seq_len), 0), m, n,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1), c.stride(2),
        PRECISION=_precision(allow_tf32, a.device), **blocks, **options,
    )  # fmt: skip
    return c


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's block sizes for the operands each kernel gets in upstream's autograd Function,
    with Triton's default num_warps=4 and num_stages=3."""
    n, d, t = shape["max_seq_len"], shape["D"], shape["T"]
    if kernel == "fwd":  # x^T [D, sum_L] @ y [sum_L, T]
        return _jagged_bmm_default(d, t)
    if kernel == "bwd_dx":  # y [sum_L, T] @ dout^T [B, T, D]
        return _dense_bmm_default(n, d, t)
    if kernel == "bwd_dy":  # x [sum_L, D] @ dout [B, D, T]
        return _dense_bmm_default(n, t, d)
    raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd_dx, bwd_dy")


def _check_inputs(x, y, offsets, dout=None):
    if x.dim() != 2 or y.dim() != 2 or x.size(0) != y.size(0):
        raise ValueError("expected x: [sum_L, D] and y: [sum_L, T] with the same rows")
    if x.dtype != y.dtype:
        raise ValueError("x and y must share one dtype")
    batch = offsets.numel() - 1
    want = (batch, x.size(1), y.size(1))
    if dout is not None and (tuple(dout.shape) != want or dout.dtype != x.dtype):
        raise ValueError(f"dout {tuple(dout.shape)} must be {list(want)} of x's dtype")
    _check_offsets(offsets, x.size(0))


def jagged_jagged_bmm_fwd(
    x, y, x_offsets, max_seq_len, allow_tf32=False, *, config=None, check=False
):
    """x [sum_L, D]^T @ y [sum_L, T] per sequence -> [B, D, T] (zeros for an empty sequence)."""
    if _checked(check):
        _check_inputs(x, y, x_offsets)
    shape = _shape(x_offsets.numel() - 1, max_seq_len, x.size(1), y.size(1))
    return _jagged_bmm("fwd", shape, x.T, y, x_offsets, int(max_seq_len), allow_tf32, config)


def bwd_dx(x, y, x_offsets, max_seq_len, dout, allow_tf32=False, *, config=None):
    """dx = y @ dout^T per sequence: [sum_L, T] @ [B, T, D] -> [sum_L, D]."""
    shape = _shape(x_offsets.numel() - 1, max_seq_len, x.size(1), y.size(1))
    dt = dout.permute(0, 2, 1)
    return _dense_bmm("bwd_dx", shape, y, dt, x_offsets, int(max_seq_len), allow_tf32, config)


def bwd_dy(x, y, x_offsets, max_seq_len, dout, allow_tf32=False, *, config=None):
    """dy = x @ dout per sequence: [sum_L, D] @ [B, D, T] -> [sum_L, T]."""
    shape = _shape(x_offsets.numel() - 1, max_seq_len, x.size(1), y.size(1))
    return _dense_bmm("bwd_dy", shape, x, dout, x_offsets, int(max_seq_len), allow_tf32, config)


def jagged_jagged_bmm_bwd(
    x, y, x_offsets, max_seq_len, dout, allow_tf32=False, *, configs=None, check=False
):
    """(dx, dy) of jagged_jagged_bmm for the output gradient dout [B, D, T]."""
    configs = configs or {}
    if _checked(check):
        _check_inputs(x, y, x_offsets, dout)
    args = (x, y, x_offsets, max_seq_len, dout, allow_tf32)
    return bwd_dx(*args, config=configs.get("bwd_dx")), bwd_dy(*args, config=configs.get("bwd_dy"))


class JaggedJaggedBmm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, x_offsets, max_seq_len, allow_tf32=False):
        ctx.save_for_backward(x, y, x_offsets)
        ctx.max_seq_len = max_seq_len
        ctx.allow_tf32 = allow_tf32
        return jagged_jagged_bmm_fwd(x, y, x_offsets, max_seq_len, allow_tf32)

    @staticmethod
    def backward(ctx, dout):
        x, y, x_offsets = ctx.saved_tensors
        dx, dy = jagged_jagged_bmm_bwd(x, y, x_offsets, ctx.max_seq_len, dout, ctx.allow_tf32)
        return dx, dy, None, None, None


def jagged_jagged_bmm(x, y, x_offsets, max_seq_len, allow_tf32=False):
    """Upstream's `jagged_jagged_bmm(..., use_fbgemm_kernel=False)`, differentiable."""
    return JaggedJaggedBmm.apply(x, y, x_offsets.contiguous(), max_seq_len, allow_tf32)
