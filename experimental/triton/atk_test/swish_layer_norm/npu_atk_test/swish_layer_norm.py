# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton SwishLayerNorm, sigmoid(LN(x) * w + b) * x
# (NVIDIA/recsys-examples, see README.md), written here. Upstream runs one row per program forward, min(sms * 8, N / 4)
# programs for dx (partial dw/db rows stored and re-read every row) and an autotuned column sum;
# here every kernel runs NUM_PROGRAMS programs over blocks of BLOCK_N rows (an Ascend launch takes
# at most 65535 blocks), and dx keeps its partial sums in registers until its last row.
"""Triton port of swish_layer_norm: y = sigmoid(z) * x, z = (x - mean) * rstd * weight + bias per
row of [N, D], and its backward (dx; dweight and dbias from per-program partial rows)."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _swish_layer_norm_fwd_kernel(
    X, Y, W, B, Mean, Rstd, N, D, eps, stride_x, stride_y,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    col_mask = cols < D
    w = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=col_mask, other=0.0).to(tl.float32)
    for start in range(pid * BLOCK_N, N, tl.num_programs(0) * BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        row_mask = rows < N
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        x = tl.load(X + rows64[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        x = x.to(tl.float32)
        mean = tl.sum(x, axis=1) / D
        centered = tl.where(mask, x - mean[:, None], 0.0)
        rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=1) / D + eps)
        tl.store(Mean + rows, mean, mask=row_mask)
        tl.store(Rstd + rows, rstd, mask=row_mask)
        z = centered * rstd[:, None] * w[None, :] + b[None, :]
        y = tl.sigmoid(z) * x
        tl.store(
            Y + rows64[:, None] * stride_y + cols[None, :], y.to(Y.dtype.element_ty), mask=mask
        )


@triton.jit
def _swish_layer_norm_bwd_dx_kernel(
    DX, DY, X, W, B, Mean, Rstd, DW_PARTIAL, DB_PARTIAL, N, D, stride_dx, stride_dy, stride_x,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    col_mask = cols < D
    w = tl.load(W + cols, mask=col_mask, other=0.0).to(tl.float32)
    b = tl.load(B + cols, mask=col_mask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_D], dtype=tl.float32)
    db = tl.zeros([BLOCK_D], dtype=tl.float32)
    for start in range(pid * BLOCK_N, N, tl.num_programs(0) * BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        row_mask = rows < N
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        x = tl.load(X + rows64[:, None] * stride_x + cols[None, :], mask=mask, other=0.0)
        dy = tl.load(DY + rows64[:, None] * stride_dy + cols[None, :], mask=mask, other=0.0)
        x, dy = x.to(tl.float32), dy.to(tl.float32)
        mean = tl.load(Mean + rows, mask=row_mask, other=0.0)
        rstd = tl.load(Rstd + rows, mask=row_mask, other=0.0)
        xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0)
        s = tl.where(mask, tl.sigmoid(xhat * w[None, :] + b[None, :]), 0.0)
        through = dy * x * s * (1 - s)  # the gradient at z
        g = through * w[None, :]
        c1 = tl.sum(xhat * g, axis=1) / D
        c2 = tl.sum(g, axis=1) / D
        dx = (g - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None] + dy * s
        tl.store(
            DX + rows64[:, None] * stride_dx + cols[None, :], dx.to(DX.dtype.element_ty), mask=mask
        )
        dw += tl.sum(through * xhat, axis=0)
        db += tl.sum(through, axis=0)
    tl.store(DW_PARTIAL + pid.to(tl.int64) * D + cols, dw, mask=col_mask)
    tl.store(DB_PARTIAL + pid.to(tl.int64) * D + cols, db, mask=col_mask)


@triton.jit
def _swish_layer_norm_bwd_dw_kernel(
    DW_PARTIAL, DB_PARTIAL, DW, DB, P, D, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = pid * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols < D
    dw = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    db = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
    for start in range(0, P, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < P) & col_mask[None, :]
        offsets = rows[:, None].to(tl.int64) * D + cols[None, :]
        dw += tl.load(DW_PARTIAL + offsets, mask=mask, other=0.0)
        db += tl.load(DB_PARTIAL + offsets, mask=mask, other=0.0)
    tl.store(DW + cols, tl.sum(dw, axis=0).to(DW.dtype.element_ty), mask=col_mask)
    tl.store(DB + cols, tl.sum(db, axis=0).to(DB.dtype.element_ty), mask=col_mask)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd_dw": [
            {
                "case": "n1048576_d256_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "D": 256},
                "config": {"BLOCK_N": 64, "BLOCK_D": 4, "num_warps": 8},
            },
            {
                "case": "n131072_d1024_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 1024},
                "config": {"BLOCK_N": 64, "BLOCK_D": 4, "num_warps": 8},
            },
            {
                "case": "n131072_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 256},
                "config": {"BLOCK_N": 64, "BLOCK_D": 4, "num_warps": 8},
            },
            {
                "case": "n262144_d512_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 512},
                "config": {"BLOCK_N": 64, "BLOCK_D": 4, "num_warps": 8},
            },
        ],
        "bwd_dx": [
            {
                "case": "n1048576_d256_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "D": 256},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 2048, "num_warps": 1},
            },
            {
                "case": "n131072_d1024_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 1024},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 1024, "num_warps": 4},
            },
            {
                "case": "n131072_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 256},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 2048, "num_warps": 1},
            },
            {
                "case": "n262144_d512_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 512},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 1024, "num_warps": 2},
            },
        ],
        "fwd": [
            {
                "case": "n1048576_d256_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "D": 256},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 32768, "num_warps": 1},
            },
            {
                "case": "n131072_d1024_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 1024},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "n131072_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 256},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 32768, "num_warps": 1},
            },
            {
                "case": "n262144_d512_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 512},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 32768, "num_warps": 1},
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
_CONSTEXPRS = ("BLOCK_D", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {"fwd": {"BLOCK_N": "N"}, "bwd_dx": {"BLOCK_N": "N"}, "bwd_dw": {"BLOCK_D": "D"}}
# kernel -> the shape keys of the dimensions a program holds whole (`_fit_warps`)
_WHOLE_KEYS = {"fwd": ("D",), "bwd_dx": ("D",)}
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
    """Upstream's launches: one row per program forward (here at most 32768 programs), 1024
    programs for dx (an H200's min(sms * 8, N / 4)), num_warps min(max(BLOCK_D // 256, 1), 8);
    the column sum at its first autotune config and BLOCK_D for 132 SMs."""
    row_warps = min(max(triton.next_power_of_2(shape["D"]) // 256, 1), 8)
    if kernel == "fwd":
        return {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": row_warps}
    if kernel == "bwd_dx":
        return {"BLOCK_N": 1, "NUM_PROGRAMS": 1024, "num_warps": row_warps}
    width = min(max(triton.next_power_of_2(triton.cdiv(shape["D"], 1024)), 4), 128)
    return {"BLOCK_N": 32, "BLOCK_D": width, "num_warps": 8}


def _launch_config(kernel, config, shape, tensor, dtype=None):
    """(constexpr blocks, launch options, programs) of the given or picked config; picked for
    `dtype`, the case's (bwd_dw's partial rows are fp32 whatever it is), else `tensor`'s."""
    if config is None:
        dtype = dtype or tensor.dtype
        dtype = _DTYPE_NAMES.get(dtype, str(dtype))
        default = default_config(kernel, shape)
        config = _pick_config(kernel, shape, dtype, tensor.device, default)
    blocks, options = _split_config(config, tensor.device)
    return blocks, options, config.get("NUM_PROGRAMS", 1)


def _row_block(d):
    """The one column block: the whole row (upstream's limit, 64 KiB of it)."""
    return triton.next_power_of_2(d)


def _check_rows(x, *vectors):
    if x.dim() != 2:
        raise ValueError(f"x must be [N, D], got {tuple(x.shape)}")
    for v in vectors:
        if v.dim() != 1 or v.numel() != x.size(1):
            raise ValueError(f"weight and bias must be [D] = [{x.size(1)}], got {tuple(v.shape)}")
    if _row_block(x.size(1)) * x.element_size() > 65536:
        raise ValueError(f"D={x.size(1)} is over a 64 KiB row (upstream's limit too)")


def swish_layer_norm_fwd(x, weight, bias, eps, *, config=None, check=False):
    """(y, mean, rstd): y in x's dtype, the fp32 row statistics the backward reads. A weight or
    bias of None (triton_swish_layer_norm's Optional; its SwishLayerNormFunction asserts both)
    is refused in every mode."""
    if weight is None or bias is None:
        raise ValueError(
            "swish_layer_norm needs a weight and a bias (upstream's SwishLayerNormFunction asserts both)"
        )
    if _checked(check):
        _check_rows(x, weight, bias)
    x = x.contiguous()
    n, d = x.shape
    blocks, options, programs = _launch_config("fwd", config, {"N": n, "D": d}, x)
    y = torch.empty_like(x)
    mean = torch.empty(n, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n, dtype=torch.float32, device=x.device)
    if n == 0:
        return y, mean, rstd
    grid = (min(programs, triton.cdiv(n, blocks["BLOCK_N"])),)
    _swish_layer_norm_fwd_kernel[grid](
        x, y, weight, bias, mean, rstd, n, d, eps, x.stride(0), y.stride(0),
        BLOCK_D=_row_block(d), **blocks, **options,
    )  # fmt: skip
    return y, mean, rstd


def swish_layer_norm_bwd_dx(dy, x, weight, bias, mean, rstd, *, config=None):
    """(dx, dw partial rows, db partial rows): one fp32 [D] row of each per program."""
    x, dy = x.contiguous(), dy.contiguous()
    n, d = x.shape
    blocks, options, programs = _launch_config("bwd_dx", config, {"N": n, "D": d}, x)
    programs = max(1, min(programs, triton.cdiv(n, blocks["BLOCK_N"])))
    dx = torch.empty_like(x)
    dw = torch.zeros(programs, d, dtype=torch.float32, device=x.device)
    db = torch.zeros(programs, d, dtype=torch.float32, device=x.device)
    if n == 0:
        return dx, dw, db
    _swish_layer_norm_bwd_dx_kernel[(programs,)](
        dx, dy, x, weight, bias, mean, rstd, dw, db, n, d, dx.stride(0), dy.stride(0), x.stride(0),
        BLOCK_D=_row_block(d), **blocks, **options,
    )  # fmt: skip
    return dx, dw, db


def swish_layer_norm_bwd_dw(dw_partial, db_partial, rows, dtype, *, config=None):
    """(dweight, dbias) in `dtype`: the partial rows summed; `rows` (N) picks the config."""
    p, d = dw_partial.shape
    blocks, options, _ = _launch_config("bwd_dw", config, {"N": rows, "D": d}, dw_partial, dtype)
    dw = torch.empty(d, dtype=dtype, device=dw_partial.device)
    db = torch.empty(d, dtype=dtype, device=dw_partial.device)
    _swish_layer_norm_bwd_dw_kernel[(triton.cdiv(d, blocks["BLOCK_D"]),)](
        dw_partial, db_partial, dw, db, p, d, **blocks, **options
    )
    return dw, db


class SwishLayerNormFunction(torch.autograd.Function):
    """Autograd of the port, the call upstream's triton_swish_layer_norm(x, weight, bias, eps) makes."""

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        y, mean, rstd = swish_layer_norm_fwd(x, weight, bias, eps)
        ctx.save_for_backward(x, weight, bias, mean, rstd)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight, bias, mean, rstd = ctx.saved_tensors
        dx, dw, db = swish_layer_norm_bwd_dx(dy, x, weight, bias, mean, rstd)
        dweight, dbias = swish_layer_norm_bwd_dw(dw, db, x.size(0), weight.dtype)
        return dx, dweight, dbias, None


def swish_layer_norm(x, weight, bias, eps):
    """Upstream's triton_swish_layer_norm(x, weight, bias, eps)."""
    return SwishLayerNormFunction.apply(x, weight, bias, eps)
