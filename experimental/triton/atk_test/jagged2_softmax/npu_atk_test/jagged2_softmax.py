# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's Triton jagged2_softmax (pytorch/FBGEMM, see README.md), written here.
# Sample b is an L_b x L_b row-major matrix at offsets_total[b] of a 1-D tensor; softmax runs over
# the columns (transpose) or the rows of its top-left n_b x n_b block, n_b = min(L_b, max_seq_len);
# the rest of the matrix is zero. Upstream runs one program per (sample, softmax vector) with the
# whole vector in one tile; this port gives each program BLOCK_H vectors (contiguous loads when
# softmax runs over columns) and walks vectors longer than BLOCK_N in blocks (online max and sum,
# then a second pass that writes), with fp32 statistics for every dtype.
"""Triton port of jagged2_softmax: forward and backward over per-sample square matrices."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged2_softmax_fwd_kernel(
    x_ptr, y_ptr, offsets_ptr, offsets_total_ptr, max_seq_len,
    TRANSPOSE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr,
):  # fmt: skip
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    begin = tl.load(offsets_total_ptr + pid_b)
    length = tl.load(offsets_ptr + pid_b + 1) - tl.load(offsets_ptr + pid_b)
    n = tl.minimum(length, max_seq_len)
    if pid_h * BLOCK_H >= n:
        return
    # Softmax over axis 0 of a [BLOCK_N, BLOCK_H] tile: n indexes the softmax axis, h the vectors.
    if TRANSPOSE:  # over the rows of each column: columns are contiguous
        stride_n = length
        stride_h = 1
    else:  # over the columns of each row: the softmax axis is contiguous
        stride_n = 1
        stride_h = length
    offs_n = tl.arange(0, BLOCK_N)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = offs_h < n
    offs = begin + offs_n[:, None] * stride_n + offs_h[None, :] * stride_h
    if n <= BLOCK_N:
        mask = (offs_n < n)[:, None] & mask_h[None, :]
        x = tl.load(x_ptr + offs, mask=mask, other=-float("inf")).to(tl.float32)
        e = tl.exp(x - tl.max(x, axis=0)[None, :])
        y = e / tl.sum(e, axis=0)[None, :]
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)
    else:
        m = tl.full([BLOCK_H], -float("inf"), tl.float32)
        s = tl.zeros([BLOCK_H], dtype=tl.float32)
        for start in range(0, n, BLOCK_N):
            mask = ((start + offs_n) < n)[:, None] & mask_h[None, :]
            x = tl.load(x_ptr + offs + start * stride_n, mask=mask, other=-float("inf"))
            x = x.to(tl.float32)
            m_new = tl.maximum(m, tl.max(x, axis=0))
            s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[None, :]), axis=0)
            m = m_new
        for start in range(0, n, BLOCK_N):
            mask = ((start + offs_n) < n)[:, None] & mask_h[None, :]
            x = tl.load(x_ptr + offs + start * stride_n, mask=mask, other=-float("inf"))
            y = tl.exp(x.to(tl.float32) - m[None, :]) / s[None, :]
            tl.store(y_ptr + offs + start * stride_n, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _jagged2_softmax_bwd_kernel(
    dy_ptr, y_ptr, dx_ptr, offsets_ptr, offsets_total_ptr, max_seq_len,
    TRANSPOSE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr,
):  # fmt: skip
    pid_b = tl.program_id(0)
    pid_h = tl.program_id(1)
    begin = tl.load(offsets_total_ptr + pid_b)
    length = tl.load(offsets_ptr + pid_b + 1) - tl.load(offsets_ptr + pid_b)
    n = tl.minimum(length, max_seq_len)
    if pid_h * BLOCK_H >= n:
        return
    if TRANSPOSE:
        stride_n = length
        stride_h = 1
    else:
        stride_n = 1
        stride_h = length
    offs_n = tl.arange(0, BLOCK_N)
    offs_h = pid_h * BLOCK_H + tl.arange(0, BLOCK_H)
    mask_h = offs_h < n
    offs = begin + offs_n[:, None] * stride_n + offs_h[None, :] * stride_h
    if n <= BLOCK_N:
        mask = (offs_n < n)[:, None] & mask_h[None, :]
        dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        y = tl.load(y_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        dx = (dy - tl.sum(dy * y, axis=0)[None, :]) * y
        tl.store(dx_ptr + offs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
    else:
        acc = tl.zeros([BLOCK_H], dtype=tl.float32)
        for start in range(0, n, BLOCK_N):
            mask = ((start + offs_n) < n)[:, None] & mask_h[None, :]
            dy = tl.load(dy_ptr + offs + start * stride_n, mask=mask, other=0.0).to(tl.float32)
            y = tl.load(y_ptr + offs + start * stride_n, mask=mask, other=0.0).to(tl.float32)
            acc += tl.sum(dy * y, axis=0)
        for start in range(0, n, BLOCK_N):
            mask = ((start + offs_n) < n)[:, None] & mask_h[None, :]
            dy = tl.load(dy_ptr + offs + start * stride_n, mask=mask, other=0.0).to(tl.float32)
            y = tl.load(y_ptr + offs + start * stride_n, mask=mask, other=0.0).to(tl.float32)
            dx = (dy - acc[None, :]) * y
            tl.store(dx_ptr + offs + start * stride_n, dx.to(dx_ptr.dtype.element_ty), mask=mask)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_n512_dim2_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 512, "dim": 2},
                "config": {"BLOCK_N": 512, "BLOCK_H": 4, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b1024_n512_dim2_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 512, "dim": 2},
                "config": {"BLOCK_N": 512, "BLOCK_H": 4, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_n256_dim1_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "dim": 1},
                "config": {"BLOCK_N": 64, "BLOCK_H": 64, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b512_n1024_dim1_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "dim": 1},
                "config": {"BLOCK_N": 64, "BLOCK_H": 32, "num_warps": 2, "num_stages": 4},
            },
        ],
        "fwd": [
            {
                "case": "b1024_n512_dim2_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 1024, "max_seq_len": 512, "dim": 2},
                "config": {"BLOCK_N": 512, "BLOCK_H": 4, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b1024_n512_dim2_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 512, "dim": 2},
                "config": {"BLOCK_N": 512, "BLOCK_H": 4, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b2048_n256_dim1_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "dim": 1},
                "config": {"BLOCK_N": 32, "BLOCK_H": 64, "num_warps": 4, "num_stages": 3},
            },
            {
                "case": "b512_n1024_dim1_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "dim": 1},
                "config": {"BLOCK_N": 32, "BLOCK_H": 32, "num_warps": 2, "num_stages": 4},
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
_CONSTEXPRS = ("BLOCK_H", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_N": "max_seq_len", "BLOCK_H": "max_seq_len"},
    "bwd": {"BLOCK_N": "max_seq_len", "BLOCK_H": "max_seq_len"},
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


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's launch, both kernels: one softmax vector per program (BLOCK_H = 1), the whole
    vector in one tile (BLOCK_N = max(next_power_of_2(max_seq_len), 8)), Triton's num_warps=4."""
    return {
        "BLOCK_N": max(triton.next_power_of_2(int(shape["max_seq_len"])), 8),
        "BLOCK_H": 1,
        "num_warps": 4,
    }


def _shape(offsets, max_seq_len, transpose):
    # `dim`: the axis of the padded [B, N, N] view the softmax runs over (transpose: 1, else 2).
    return {"B": offsets.numel() - 1, "max_seq_len": int(max_seq_len), "dim": 1 if transpose else 2}


def _check_inputs(x, offsets, offsets_total, max_seq_len, *others):
    if x.dim() != 1 or not x.is_contiguous():
        raise ValueError(f"x must be a contiguous 1-D tensor [sum_b L_b^2], got {tuple(x.shape)}")
    if int(max_seq_len) < 0:
        raise ValueError(f"max_seq_len must be non-negative, got {max_seq_len}")
    for other in others:
        if other.shape != x.shape or other.dtype != x.dtype or not other.is_contiguous():
            raise ValueError(
                f"tensors must be contiguous with x's shape {tuple(x.shape)} and dtype {x.dtype}, "
                f"got {tuple(other.shape)} {other.dtype}"
            )
    if offsets.numel() != offsets_total.numel():
        raise ValueError(
            f"offsets ({offsets.numel()}) and offsets_total ({offsets_total.numel()}) must have "
            "B + 1 entries each"
        )
    _check_offsets(offsets, int(offsets[-1]) if offsets.numel() else 0)
    _check_offsets(offsets_total, x.numel())
    lengths = offsets[1:] - offsets[:-1]
    if not torch.equal((offsets_total[1:] - offsets_total[:-1]).cpu(), (lengths * lengths).cpu()):
        raise ValueError("offsets_total must be the cumulative sum of the squared lengths")


def _launch(kernel, fn, tensors, offsets, offsets_total, max_seq_len, transpose, config):
    ref = tensors[0]
    shape = _shape(offsets, max_seq_len, transpose)
    blocks, options = _configure(kernel, config, shape, ref)
    # Outside each sample's top-left n x n block the result is zero, as upstream's.
    out = torch.zeros_like(ref)
    if out.numel() == 0 or shape["B"] == 0 or shape["max_seq_len"] == 0:
        return out
    grid = (shape["B"], triton.cdiv(shape["max_seq_len"], blocks["BLOCK_H"]))
    fn[grid](
        *tensors, out, offsets, offsets_total, int(max_seq_len),
        TRANSPOSE=bool(transpose), **blocks, **options,
    )  # fmt: skip
    return out


def jagged2_softmax_forward(
    x, offsets, offsets_total, max_seq_len, transpose, *, config=None, check=False
):
    """y [sum_b L_b^2]: softmax of each sample's n_b x n_b block over its rows (`transpose`, i.e.
    per column) or its columns (per row), n_b = min(L_b, max_seq_len); zeros elsewhere."""
    if _checked(check):
        _check_inputs(x, offsets, offsets_total, max_seq_len)
    return _launch(
        "fwd", _jagged2_softmax_fwd_kernel, (x,), offsets, offsets_total, max_seq_len, transpose,
        config,
    )  # fmt: skip


def jagged2_softmax_backward(
    grad_output, y, offsets, offsets_total, max_seq_len, transpose, *, config=None, check=False
):
    """dx = (dy - sum(dy * y)) * y along each softmax vector; zeros outside the n_b x n_b blocks."""
    if _checked(check):
        _check_inputs(y, offsets, offsets_total, max_seq_len, grad_output)
    return _launch(
        "bwd", _jagged2_softmax_bwd_kernel, (grad_output, y), offsets, offsets_total,
        max_seq_len, transpose, config,
    )  # fmt: skip


class Jagged2Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, offsets, offsets_total, max_seq_len, transpose):
        y = jagged2_softmax_forward(x, offsets, offsets_total, max_seq_len, transpose)
        ctx.save_for_backward(y, offsets, offsets_total)
        ctx.max_seq_len = max_seq_len
        ctx.transpose = transpose
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, offsets, offsets_total = ctx.saved_tensors
        grad = jagged2_softmax_backward(
            grad_output.contiguous(), y, offsets, offsets_total, ctx.max_seq_len, ctx.transpose
        )
        return grad, None, None, None, None


def jagged2_softmax(x, offsets, offsets_total, max_seq_len, transpose):
    """Same call as upstream's jagged2_softmax: x [sum_b L_b^2], offsets of L_b, offsets_total of
    L_b^2; softmax per column (`transpose`) or per row of each sample's matrix."""
    return Jagged2Softmax.apply(x.contiguous(), offsets, offsets_total, max_seq_len, transpose)
