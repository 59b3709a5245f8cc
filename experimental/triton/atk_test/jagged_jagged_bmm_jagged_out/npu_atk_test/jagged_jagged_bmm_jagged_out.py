# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's SLL jagged_jagged_bmm_jagged_out (JaggedJaggedBmmNoPadding, pytorch/FBGEMM
# sll/triton/triton_jagged_bmm_jagged_out.py, see README.md), written here: z = x y^T per sequence
# as an Lt x Lt block of a jagged output, and its backward's two array x jagged products
# dx = dz y and dy = dz^T x. Differences from upstream: one offsets tensor for x and y (upstream
# takes two and assumes equal lengths), masks instead of wrapped indices, y read in place rather
# than as a transposed view, a 2-D grid for the backward, TF32 asked as HF32 on an NPU, and the
# tunables passed per launch from the frozen configs below (upstream: 32 x 32 x 32).
"""Triton port of jagged_jagged_bmm_jagged_out: forward and its backward's two kernels."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_jagged_bmm_jagged_out_kernel(
    x_ptr, y_ptr, offsets_ptr, z_ptr, z_offsets_ptr, max_seq_len, K,
    stride_xl, stride_xd, stride_yl, stride_yd,
    PRECISION: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """z[z_offsets[b] + m * Lt + n] = x[begin + m] . y[begin + n] for m, n < Lt, the sequence's
    rows truncated to Lt = min(L_b, max_seq_len): one BLOCK_M x BLOCK_N tile of the block."""
    pid = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    begin = tl.load(offsets_ptr + pid_b)
    seqlen = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_seq_len)
    num_n = tl.cdiv(max_seq_len, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    # Tiles past the end of a short sequence have nothing to do (the grid covers max_seq_len).
    if (pid_m * BLOCK_M < seqlen) & (pid_n * BLOCK_N < seqlen):
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        mask_m = offs_m < seqlen
        mask_n = offs_n < seqlen
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start_k in range(0, K, BLOCK_K):
            ks = start_k + offs_k
            mask_k = ks < K
            x = tl.load(
                x_ptr + (begin + offs_m)[:, None] * stride_xl + ks[None, :] * stride_xd,
                mask=mask_m[:, None] & mask_k[None, :],
                other=0.0,
            )
            y_t = tl.load(
                y_ptr + (begin + offs_n)[None, :] * stride_yl + ks[:, None] * stride_yd,
                mask=mask_k[:, None] & mask_n[None, :],
                other=0.0,
            )
            acc += tl.dot(x, y_t, input_precision=PRECISION)
        start = tl.load(z_offsets_ptr + pid_b)
        tl.store(
            z_ptr + start + offs_m[:, None] * seqlen + offs_n[None, :],
            acc.to(z_ptr.dtype.element_ty),
            mask=mask_m[:, None] & mask_n[None, :],
        )


@triton.jit
def _array_jagged_bmm_kernel(
    a_ptr, b_ptr, c_ptr, offsets_ptr, a_offsets_ptr, max_seq_len, D,
    stride_bl, stride_bd, stride_cl, stride_cd,
    TRANSPOSE: tl.constexpr, PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """c[begin + m] = sum_{k < Lt} A[m, k] b[begin + k] for m < Lt: A the sequence's L x L matrix
    of the array a (row stride L) at a_offsets[b], or with TRANSPOSE its transpose; one
    BLOCK_M x BLOCK_N tile of the sequence's Lt x D rows."""
    pid = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    begin = tl.load(offsets_ptr + pid_b)
    length = tl.load(offsets_ptr + pid_b + 1) - begin
    seqlen = tl.minimum(length, max_seq_len)
    num_n = tl.cdiv(D, BLOCK_N)
    pid_m = pid // num_n
    pid_n = pid % num_n
    if TRANSPOSE:
        stride_am, stride_ak = 1, length
    else:
        stride_am, stride_ak = length, 1
    if pid_m * BLOCK_M < seqlen:
        offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        offs_k = tl.arange(0, BLOCK_K)
        mask_m = offs_m < seqlen
        mask_n = offs_n < D
        a_start = a_ptr + tl.load(a_offsets_ptr + pid_b)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for start_k in range(0, seqlen, BLOCK_K):
            ks = start_k + offs_k
            mask_k = ks < seqlen
            a = tl.load(
                a_start + offs_m[:, None] * stride_am + ks[None, :] * stride_ak,
                mask=mask_m[:, None] & mask_k[None, :],
                other=0.0,
            )
            b = tl.load(
                b_ptr + (begin + ks)[:, None] * stride_bl + offs_n[None, :] * stride_bd,
                mask=mask_k[:, None] & mask_n[None, :],
                other=0.0,
            )
            acc += tl.dot(a, b, input_precision=PRECISION)
        tl.store(
            c_ptr + (begin + offs_m)[:, None] * stride_cl + offs_n[None, :] * stride_cd,
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
                "case": "b128_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 128, "max_seq_len": 512, "D": 64},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b192_n512_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 192, "max_seq_len": 512, "D": 128},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 256, "D": 128},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b768_n256_d256_fp16",
                "dtype": "float16",
                "shape": {"B": 768, "max_seq_len": 256, "D": 256},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
        ],
        "bwd_dy": [
            {
                "case": "b128_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 128, "max_seq_len": 512, "D": 64},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b192_n512_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 192, "max_seq_len": 512, "D": 128},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 256, "D": 128},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b768_n256_d256_fp16",
                "dtype": "float16",
                "shape": {"B": 768, "max_seq_len": 256, "D": 256},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
        ],
        "fwd": [
            {
                "case": "b128_n512_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 128, "max_seq_len": 512, "D": 64},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b192_n512_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 192, "max_seq_len": 512, "D": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b512_n256_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 256, "D": 128},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
                    "BLOCK_K": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                },
            },
            {
                "case": "b768_n256_d256_fp16",
                "dtype": "float16",
                "shape": {"B": 768, "max_seq_len": 256, "D": 256},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 32,
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
    "fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len", "BLOCK_K": "D"},
    "bwd_dx": {"BLOCK_M": "max_seq_len", "BLOCK_N": "D", "BLOCK_K": "max_seq_len"},
    "bwd_dy": {"BLOCK_M": "max_seq_len", "BLOCK_N": "D", "BLOCK_K": "max_seq_len"},
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
    """Upstream's launch, every kernel: 32 x 32 x 32 blocks, Triton's num_warps=4, num_stages=3."""
    return {"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "num_warps": 4, "num_stages": 3}


def _check_inputs(x, y, offsets, z_offsets, dz=None):
    if x.dim() != 2 or x.shape != y.shape:
        raise ValueError(
            f"x and y must be [sum_L, D] of one shape, got {tuple(x.shape)} and {tuple(y.shape)}"
        )
    if x.dtype != y.dtype or (dz is not None and dz.dtype != x.dtype):
        raise ValueError("x, y and dz must have one dtype")
    if z_offsets.numel() != offsets.numel():
        raise ValueError(f"z_offsets has {z_offsets.numel()} entries, offsets {offsets.numel()}")
    _check_offsets(offsets, x.size(0))
    if dz is not None:
        _check_offsets(z_offsets, dz.numel())


def _shape(x, offsets, max_seq_len):
    return {"B": offsets.numel() - 1, "max_seq_len": int(max_seq_len), "D": x.size(1)}


def jagged_jagged_bmm_jagged_out_fwd(
    x, y, offsets, z_offsets, max_seq_len, total=None, allow_tf32=False, *, config=None,
    check=False,
):  # fmt: skip
    """z [z_offsets[-1]]: per sequence b, x_b y_b^T over its first Lt = min(L_b, max_seq_len)
    rows, an Lt x Lt block (row stride Lt) at z_offsets[b] (= cumsum of L^2), zeros elsewhere.
    `total` (z_offsets[-1] as a host int) spares reading it from the device."""
    if _checked(check):
        _check_inputs(x, y, offsets, z_offsets)
    shape = _shape(x, offsets, max_seq_len)
    blocks, options = _configure("fwd", config, shape, x)
    total = int(z_offsets[-1]) if total is None else int(total)
    z = torch.zeros(total, dtype=x.dtype, device=x.device)
    n, batch = shape["max_seq_len"], shape["B"]
    if total == 0 or n == 0:
        return z
    grid = (triton.cdiv(n, blocks["BLOCK_M"]) * triton.cdiv(n, blocks["BLOCK_N"]), batch)
    _jagged_jagged_bmm_jagged_out_kernel[grid](
        x, y, offsets, z, z_offsets, n, x.size(1),
        x.stride(0), x.stride(1), y.stride(0), y.stride(1),
        PRECISION=_precision(allow_tf32, x.device), **blocks, **options,
    )  # fmt: skip
    return z


def _array_bmm(kernel, dz, b, offsets, z_offsets, max_seq_len, transpose, allow_tf32, config):
    shape = _shape(b, offsets, max_seq_len)
    blocks, options = _configure(kernel, config, shape, b)
    c = torch.zeros_like(b)
    n, batch = shape["max_seq_len"], shape["B"]
    if c.numel() == 0 or n == 0:
        return c
    grid = (triton.cdiv(n, blocks["BLOCK_M"]) * triton.cdiv(b.size(1), blocks["BLOCK_N"]), batch)
    _array_jagged_bmm_kernel[grid](
        dz, b, c, offsets, z_offsets, n, b.size(1),
        b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        TRANSPOSE=transpose, PRECISION=_precision(allow_tf32, b.device), **blocks, **options,
    )  # fmt: skip
    return c


def bwd_dx(x, y, offsets, z_offsets, max_seq_len, dz, allow_tf32=False, *, config=None):
    """dx [sum_L, D]: per sequence dz_b [:Lt, :Lt] @ y_b (dz_b the L x L matrix at
    z_offsets[b], row stride L), zeros for the rows past max_seq_len."""
    return _array_bmm("bwd_dx", dz, y, offsets, z_offsets, max_seq_len, False, allow_tf32, config)


def bwd_dy(x, y, offsets, z_offsets, max_seq_len, dz, allow_tf32=False, *, config=None):
    """dy [sum_L, D]: per sequence dz_b [:Lt, :Lt]^T @ x_b, zeros for the rows past max_seq_len."""
    return _array_bmm("bwd_dy", dz, x, offsets, z_offsets, max_seq_len, True, allow_tf32, config)


def jagged_jagged_bmm_jagged_out_bwd(
    x, y, offsets, z_offsets, max_seq_len, dz, allow_tf32=False, *, check=False
):
    """(dx, dy) of z = x y^T, as upstream's JaggedJaggedBmmNoPadding.backward."""
    if _checked(check):
        _check_inputs(x, y, offsets, z_offsets, dz)
    dx = bwd_dx(x, y, offsets, z_offsets, max_seq_len, dz, allow_tf32)
    dy = bwd_dy(x, y, offsets, z_offsets, max_seq_len, dz, allow_tf32)
    return dx, dy


class JaggedJaggedBmmNoPadding(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y, offsets, z_offsets, max_seq_len, allow_tf32):
        ctx.save_for_backward(x, y, offsets, z_offsets)
        ctx.max_seq_len, ctx.allow_tf32 = max_seq_len, allow_tf32
        return jagged_jagged_bmm_jagged_out_fwd(
            x, y, offsets, z_offsets, max_seq_len, allow_tf32=allow_tf32
        )

    @staticmethod
    def backward(ctx, grad_output):
        x, y, offsets, z_offsets = ctx.saved_tensors
        dx, dy = jagged_jagged_bmm_jagged_out_bwd(
            x, y, offsets, z_offsets, ctx.max_seq_len, grad_output.contiguous(), ctx.allow_tf32
        )
        return dx, dy, None, None, None, None


def jagged_jagged_bmm_jagged_out(
    x, y, x_lengths, x_offsets, y_lengths, y_offsets, z_lengths, z_offsets, max_seq_len,
    allow_tf32=True,
):  # fmt: skip
    """Upstream's call: x and y of one layout (x_offsets; upstream assumes equal lengths too)."""
    return JaggedJaggedBmmNoPadding.apply(x, y, x_offsets, z_offsets, max_seq_len, allow_tf32)
