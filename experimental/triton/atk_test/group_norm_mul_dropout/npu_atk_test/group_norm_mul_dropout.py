# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton GroupNorm * u with dropout (NVIDIA/recsys-examples, see
# README.md), written here. Upstream runs one row of [H heads, D] per program, forward and dx/du
# (weight gradients added atomically into min(N, GROUP_N) lock rows), and an autotuned sum per
# head; here the row kernels run NUM_PROGRAMS programs over tiles of BLOCK_N rows of every head
# (an Ascend launch takes at most 65535 blocks), a tile's head rows normalised as a LayerNorm's
# rows, and dx/du keeps its weight gradients in registers and stores one partial row a program
# (deterministic) or, at NUM_PROGRAMS 0 (upstream's launch, a program per row block: GPUs only,
# an Ascend launch takes at most 65535 blocks), adds them atomically into upstream's lock rows;
# it loads u after storing du, upstream's order. The dropout numbers are upstream's:
# tl.rand(seed, (row * H + head) * D + col), int32 offsets, so the mask does not depend on the
# config.
"""Triton port of group_norm_mul_dropout: y = dropout((GN(x) * weight[h] + bias[h]) * u) per row
of [N, H * D] (H heads of D), and its backward (dx, du; dweight and dbias from partial rows)."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _group_norm_mul_dropout_fwd_kernel(
    X, U, Y, W, B, Mean, Rstd, N, H, D, eps, seed, dropout_ratio, stride_x, stride_u, stride_y,
    BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr, TRAINING: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    slots = tl.arange(0, BLOCK_N * BLOCK_H)  # (row of the tile, head) pairs
    heads = slots % BLOCK_H
    cols = tl.arange(0, BLOCK_D)
    head_mask = heads < H
    col_mask = cols < D
    w = tl.load(W + heads, mask=head_mask, other=0.0).to(tl.float32)
    b = tl.load(B + heads, mask=head_mask, other=0.0).to(tl.float32)
    within = heads[:, None] * D + cols[None, :]
    for start in range(pid * BLOCK_N, N, tl.num_programs(0) * BLOCK_N):
        rows = start + slots // BLOCK_H
        head_rows = rows * H + heads
        row_mask = (rows < N) & head_mask
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        x = tl.load(X + rows64[:, None] * stride_x + within, mask=mask, other=0.0)
        x = x.to(tl.float32)
        mean = tl.sum(x, axis=1) / D
        centered = tl.where(mask, x - mean[:, None], 0.0)
        rstd = 1 / tl.sqrt(tl.sum(centered * centered, axis=1) / D + eps)
        tl.store(Mean + head_rows, mean, mask=row_mask)
        tl.store(Rstd + head_rows, rstd, mask=row_mask)
        u = tl.load(U + rows64[:, None] * stride_u + within, mask=mask, other=0.0)
        y = (centered * rstd[:, None] * w[:, None] + b[:, None]) * u.to(tl.float32)
        if TRAINING:
            # upstream's numbers: Philox at row * D * H + head * D + col, int32 offsets
            random = tl.rand(seed, head_rows[:, None] * D + cols[None, :])
            keep = (random > dropout_ratio) | (dropout_ratio == 0.0)
            y = tl.where(keep, y / (1.0 - dropout_ratio), 0.0)
        tl.store(Y + rows64[:, None] * stride_y + within, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _group_norm_mul_dropout_bwd_dx_du_kernel(
    DX, DU, DY, X, U, W, B, Mean, Rstd, DW_PARTIAL, DB_PARTIAL, N, H, D, seed, dropout_ratio,
    stride_dx, stride_du, stride_dy, stride_x, stride_u, locks,
    BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr, TRAINING: tl.constexpr,
    ATOMIC: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    slots = tl.arange(0, BLOCK_N * BLOCK_H)
    heads = slots % BLOCK_H
    cols = tl.arange(0, BLOCK_D)
    head_mask = heads < H
    col_mask = cols < D
    w = tl.load(W + heads, mask=head_mask, other=0.0).to(tl.float32)
    b = tl.load(B + heads, mask=head_mask, other=0.0).to(tl.float32)
    within = heads[:, None] * D + cols[None, :]
    dw = tl.zeros([BLOCK_N * BLOCK_H], dtype=tl.float32)
    db = tl.zeros([BLOCK_N * BLOCK_H], dtype=tl.float32)
    for start in range(pid * BLOCK_N, N, tl.num_programs(0) * BLOCK_N):
        rows = start + slots // BLOCK_H
        head_rows = rows * H + heads
        row_mask = (rows < N) & head_mask
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        x = tl.load(X + rows64[:, None] * stride_x + within, mask=mask, other=0.0)
        dy = tl.load(DY + rows64[:, None] * stride_dy + within, mask=mask, other=0.0)
        x, dy = x.to(tl.float32), dy.to(tl.float32)
        if TRAINING:
            random = tl.rand(seed, head_rows[:, None] * D + cols[None, :])
            keep = (random > dropout_ratio) | (dropout_ratio == 0.0)
            dy = tl.where(keep, dy / (1.0 - dropout_ratio), 0.0)
        mean = tl.load(Mean + head_rows, mask=row_mask, other=0.0)
        rstd = tl.load(Rstd + head_rows, mask=row_mask, other=0.0)
        xhat = tl.where(mask, (x - mean[:, None]) * rstd[:, None], 0.0)
        du = dy * (xhat * w[:, None] + b[:, None])
        tl.store(DU + rows64[:, None] * stride_du + within, du.to(DU.dtype.element_ty), mask=mask)
        # u after du is stored, as upstream orders it
        u = tl.load(U + rows64[:, None] * stride_u + within, mask=mask, other=0.0)
        dy = dy * u.to(tl.float32)
        # a head's weight is one number: sum(xhat * w * dy) = w * dw_row, so two sums a head row
        # serve both dx and the weight gradients (upstream's kernel takes four)
        dw_row = tl.sum(dy * xhat, axis=1)
        db_row = tl.sum(dy, axis=1)
        c1 = w * dw_row / D
        c2 = w * db_row / D
        dx = (w[:, None] * dy - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
        tl.store(DX + rows64[:, None] * stride_dx + within, dx.to(DX.dtype.element_ty), mask=mask)
        dw += dw_row
        db += db_row
    # the tile's rows of each head summed (slot = row * BLOCK_H + head, so [BLOCK_N, BLOCK_H]
    # row-major; triton-ascend lists tl.reshape and tl.atomic_add as supported:
    # Ascend/triton-ascend docs/sources/python-api/outline.md), then one partial row of H a
    # program, or added into lock row pid % locks
    one_row = tl.arange(0, BLOCK_H)
    heads_mask = one_row < H
    dw_heads = tl.sum(tl.reshape(dw, (BLOCK_N, BLOCK_H)), axis=0)
    db_heads = tl.sum(tl.reshape(db, (BLOCK_N, BLOCK_H)), axis=0)
    if ATOMIC:
        lock = (pid % locks).to(tl.int64) * H + one_row
        tl.atomic_add(DW_PARTIAL + lock, dw_heads, mask=heads_mask, sem="relaxed")
        tl.atomic_add(DB_PARTIAL + lock, db_heads, mask=heads_mask, sem="relaxed")
    else:
        partial = pid.to(tl.int64) * H + one_row
        tl.store(DW_PARTIAL + partial, dw_heads, mask=heads_mask)
        tl.store(DB_PARTIAL + partial, db_heads, mask=heads_mask)


@triton.jit
def _group_norm_bwd_dwdb_kernel(
    DW_PARTIAL, DB_PARTIAL, DW, DB, P, H, BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    cols = pid * BLOCK_H + tl.arange(0, BLOCK_H)
    col_mask = cols < H
    dw = tl.zeros([BLOCK_N, BLOCK_H], dtype=tl.float32)
    db = tl.zeros([BLOCK_N, BLOCK_H], dtype=tl.float32)
    for start in range(0, P, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        mask = (rows[:, None] < P) & col_mask[None, :]
        offsets = rows[:, None].to(tl.int64) * H + cols[None, :]
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
                "case": "n1048576_h2_d128_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "H": 2, "D": 128},
                "config": {"BLOCK_N": 1024, "BLOCK_H": 1, "num_warps": 16},
            },
            {
                "case": "n131072_h4_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 4, "D": 64},
                "config": {"BLOCK_N": 1024, "BLOCK_H": 1, "num_warps": 16},
            },
            {
                "case": "n131072_h8_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 8, "D": 128},
                "config": {"BLOCK_N": 512, "BLOCK_H": 1, "num_warps": 16},
            },
            {
                "case": "n262144_h8_d64_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "H": 8, "D": 64},
                "config": {"BLOCK_N": 1024, "BLOCK_H": 1, "num_warps": 16},
            },
        ],
        "bwd_dx": [
            {
                "case": "n1048576_h2_d128_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "H": 2, "D": 128},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 0, "num_warps": 1},
            },
            {
                "case": "n131072_h4_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 4, "D": 64},
                "config": {"BLOCK_N": 2, "NUM_PROGRAMS": 8192, "num_warps": 2},
            },
            {
                "case": "n131072_h8_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 8, "D": 128},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 16384, "num_warps": 4},
            },
            {
                "case": "n262144_h8_d64_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "H": 8, "D": 64},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
        ],
        "fwd": [
            {
                "case": "n1048576_h2_d128_fp32",
                "dtype": "float32",
                "shape": {"N": 1048576, "H": 2, "D": 128},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 1},
            },
            {
                "case": "n131072_h4_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 4, "D": 64},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 1},
            },
            {
                "case": "n131072_h8_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "H": 8, "D": 128},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "n262144_h8_d64_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "H": 8, "D": 64},
                "config": {"BLOCK_N": 1, "NUM_PROGRAMS": 32768, "num_warps": 2},
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
_TILE_KEYS = {"fwd": {"BLOCK_N": "N"}, "bwd_dx": {"BLOCK_N": "N"}, "bwd_dw": {"BLOCK_H": "H"}}
# kernel -> the shape keys of the dimensions a program holds whole (`_fit_warps`)
_WHOLE_KEYS = {"fwd": ("H", "D"), "bwd_dx": ("H", "D")}
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


def _blocks(h, d):
    """(BLOCK_H, BLOCK_D): every head and a head's whole row, as upstream's."""
    return triton.next_power_of_2(h), triton.next_power_of_2(d)


def _row_warps(h, d):
    bh, bd = _blocks(h, d)
    return min(max(bh * bd // 256, 1), 8)


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's launches: one row per program forward and dx/du (grid (N,), here at most 32768
    programs), num_warps min(max(BLOCK_D * BLOCK_H // 256, 1), 8); the per-head sum at its first
    autotune config, one head a program."""
    if kernel in ("fwd", "bwd_dx"):
        return {
            "BLOCK_N": 1,
            "NUM_PROGRAMS": 32768,
            "num_warps": _row_warps(shape["H"], shape["D"]),
        }
    return {"BLOCK_N": 32, "BLOCK_H": 1, "num_warps": 8}


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


def _shape(x, weight):
    heads = weight.numel()
    return {"N": x.size(0), "H": heads, "D": x.size(1) // max(heads, 1)}


def _check_rows(x, u, weight, bias):
    if x.dim() != 2:
        raise ValueError(f"x must be [N, H * D], got {tuple(x.shape)}")
    if tuple(u.shape) != tuple(x.shape):
        raise ValueError(f"u must be [N, H * D] = {list(x.shape)}, got {tuple(u.shape)}")
    heads = weight.numel()
    if weight.dim() != 1 or bias.shape != weight.shape or heads == 0 or x.size(1) % heads:
        raise ValueError(
            f"weight and bias must be [H] with H dividing the row of {x.size(1)}, got "
            f"{tuple(weight.shape)} and {tuple(bias.shape)}"
        )
    bh, bd = _blocks(heads, x.size(1) // heads)
    if bh * bd * x.element_size() > 65536:
        raise ValueError(
            f"H={heads} x D={x.size(1) // heads} is over a 64 KiB row (upstream's limit)"
        )


def _unported(concat_ux=False, compute_y=False, group_norm=True):
    """A ValueError (one line, every mode) for upstream's forms not ported."""
    if concat_ux:
        raise ValueError("concat_ux is not ported (HSTU calls it with concat_ux=False)")
    if compute_y:
        raise ValueError("compute_y is not ported: the forward's y is kept, not recomputed")
    if not group_norm:
        raise ValueError("group_norm=False is the op layer_norm_mul_dropout, another port")


def _check_heads(x, weight, num_heads, linear_dim):
    """Upstream's num_heads and linear_dim agree with weight [H] and x [N, H * D]: every mode."""
    if weight.numel() != num_heads or x.size(-1) != num_heads * linear_dim:
        raise ValueError(
            f"x [N, num_heads * linear_dim] = [N, {num_heads} * {linear_dim}] and weight "
            f"[num_heads], got {tuple(x.shape)} and {tuple(weight.shape)}"
        )


def _random_seed(seed):
    """Upstream's draw when no seed is given: an int64 below 2**62."""
    if seed is None:
        return torch.randint(low=0, high=2**62, size=(1,), dtype=torch.int64).item()
    return seed


def group_norm_mul_dropout_fwd(
    x, u, weight, bias, eps, dropout_ratio, training, concat_ux=False, num_heads=1,
    linear_dim=-1, seed=None, *, config=None, check=False,
):  # fmt: skip
    """(y, mean, rstd): y in x's dtype; the fp32 statistics of each (row, head), [N * H]
    (upstream's triton_group_norm_mul_dropout_fwd, less its BLOCK_D, BLOCK_H, num_warps and
    seed). The seed must be given: the backward draws the mask again from it (upstream returns
    the one it drew)."""
    _unported(concat_ux)
    _check_heads(x, weight, num_heads, linear_dim)
    if seed is None:
        raise ValueError("group_norm_mul_dropout_fwd needs the seed the backward will draw from")
    if _checked(check):
        _check_rows(x, u, weight, bias)
    x, u = x.contiguous(), u.contiguous()
    shape = _shape(x, weight)
    n, h, d = shape["N"], shape["H"], shape["D"]
    blocks, options, programs = _launch_config("fwd", config, shape, x)
    y = torch.empty_like(x)
    mean = torch.empty(n * h, dtype=torch.float32, device=x.device)
    rstd = torch.empty(n * h, dtype=torch.float32, device=x.device)
    if n == 0:
        return y, mean, rstd
    bh, bd = _blocks(h, d)
    grid = (min(programs, triton.cdiv(n, blocks["BLOCK_N"])),)
    _group_norm_mul_dropout_fwd_kernel[grid](
        x, u, y, weight, bias, mean, rstd, n, h, d, eps, seed, dropout_ratio, x.stride(0),
        u.stride(0), y.stride(0), BLOCK_H=bh, BLOCK_D=bd, TRAINING=training, **blocks, **options,
    )  # fmt: skip
    return y, mean, rstd


def _lock_rows(n, h, d):
    """Upstream's GROUP_N, the lock rows its dx kernel adds the weight gradients into: 2048 for
    a row of H * D up to 1024 elements, 1024 to 4096, 768 to 8192, else 512; at most N."""
    width = h * d
    locks = 2048 if width <= 1024 else 1024 if width <= 4096 else 768 if width <= 8192 else 512
    return max(1, min(n, locks))


def group_norm_mul_dropout_bwd_dx(
    dy, x, u, weight, bias, mean, rstd, dropout_ratio, training, seed, *, config=None
):
    """(dx, du, dw partial rows, db partial rows): fp32 [H] rows, one a program, or at
    NUM_PROGRAMS 0 (a program per row block) upstream's lock rows, each the atomic sum of the
    programs pid % locks (the order of those adds, so the sums' last bits, vary from run to
    run); the dropout mask drawn again from `seed`, as the forward drew it."""
    x, u, dy = x.contiguous(), u.contiguous(), dy.contiguous()
    shape = _shape(x, weight)
    n, h, d = shape["N"], shape["H"], shape["D"]
    blocks, options, programs = _launch_config("bwd_dx", config, shape, x)
    atomic = programs == 0
    row_blocks = triton.cdiv(n, blocks["BLOCK_N"])
    programs = max(1, min(programs or row_blocks, row_blocks))
    rows = min(programs, _lock_rows(n, h, d)) if atomic else programs
    dx = torch.empty_like(x)
    du = torch.empty_like(u)
    # Each program stores its own partial row, so only an empty launch or atomic adds need
    # zeros (upstream zeroes its lock rows: two fills)
    partial_rows = torch.zeros if n == 0 or atomic else torch.empty
    dw = partial_rows(rows, h, dtype=torch.float32, device=x.device)
    db = partial_rows(rows, h, dtype=torch.float32, device=x.device)
    if n == 0:
        return dx, du, dw, db
    bh, bd = _blocks(h, d)
    _group_norm_mul_dropout_bwd_dx_du_kernel[(programs,)](
        dx, du, dy, x, u, weight, bias, mean, rstd, dw, db, n, h, d, seed, dropout_ratio,
        dx.stride(0), du.stride(0), dy.stride(0), x.stride(0), u.stride(0), rows,
        BLOCK_H=bh, BLOCK_D=bd, TRAINING=training, ATOMIC=atomic, **blocks, **options,
    )  # fmt: skip
    return dx, du, dw, db


def group_norm_mul_dropout_bwd_dw(dw_partial, db_partial, rows, linear_dim, dtype, *, config=None):
    """(dweight, dbias) in `dtype`: the partial rows summed per head; `rows` (N) and
    `linear_dim` (D) with the heads pick the config."""
    p, h = dw_partial.shape
    shape = {"N": rows, "H": h, "D": linear_dim}
    blocks, options, _ = _launch_config("bwd_dw", config, shape, dw_partial, dtype)
    dw = torch.empty(h, dtype=dtype, device=dw_partial.device)
    db = torch.empty(h, dtype=dtype, device=dw_partial.device)
    _group_norm_bwd_dwdb_kernel[(triton.cdiv(h, blocks["BLOCK_H"]),)](
        dw_partial, db_partial, dw, db, p, h, **blocks, **options
    )
    return dw, db


def group_norm_mul_dropout_bwd(
    dy, x, u, weight, bias, mean, rstd, BLOCK_D, BLOCK_H, num_warps, eps, training,
    dropout_ratio, seed=None, concat_ux=False, num_heads=1, linear_dim=-1, compute_y=False,
    *, configs=None,
):  # fmt: skip
    """(dx, du, dweight, dbias, None), upstream's triton_group_norm_mul_dropout_bwd. Upstream's
    BLOCK_D, BLOCK_H and num_warps (what its forward returned) are taken and not used: the launch
    configs are the frozen ones (`configs`: kernel -> config, else picked per case); eps is not
    read by the backward. concat_ux and compute_y are refused (not ported), a missing seed too."""
    _unported(concat_ux, compute_y)
    _check_heads(x, weight, num_heads, linear_dim)
    if seed is None:
        raise ValueError("group_norm_mul_dropout_bwd needs the seed the forward drew from")
    configs = configs or {}
    dx, du, dw, db = group_norm_mul_dropout_bwd_dx(
        dy, x, u, weight, bias, mean, rstd, dropout_ratio, training, seed,
        config=configs.get("bwd_dx"),
    )  # fmt: skip
    dweight, dbias = group_norm_mul_dropout_bwd_dw(
        dw, db, x.size(0), linear_dim, weight.dtype, config=configs.get("bwd_dw")
    )
    return dx, du, dweight, dbias, None


class GroupNormMulDropoutFunction(torch.autograd.Function):
    """Autograd of the port, with upstream's forward arguments (concat_ux is not ported)."""

    @staticmethod
    def forward(
        ctx, x, u, weight, bias, eps, dropout_ratio, training, concat_ux=False, num_heads=1,
        linear_dim=-1, seed=None,
    ):  # fmt: skip
        seed = _random_seed(seed)
        y, mean, rstd = group_norm_mul_dropout_fwd(
            x, u, weight, bias, eps, dropout_ratio, training, concat_ux, num_heads, linear_dim,
            seed,
        )  # fmt: skip
        ctx.save_for_backward(x, u, weight, bias, mean, rstd)
        ctx.dropout = (dropout_ratio, training, seed)
        ctx.linear_dim = linear_dim
        return y

    @staticmethod
    def backward(ctx, dy):
        x, u, weight, bias, mean, rstd = ctx.saved_tensors
        dx, du, dw, db = group_norm_mul_dropout_bwd_dx(
            dy, x, u, weight, bias, mean, rstd, *ctx.dropout
        )
        dweight, dbias = group_norm_mul_dropout_bwd_dw(
            dw, db, x.size(0), ctx.linear_dim, weight.dtype
        )
        return dx, du, dweight, dbias, None, None, None, None, None, None, None


def group_norm_mul_dropout(
    x, u, weight, bias, eps, dropout_ratio, training, concat_ux=False, group_norm=True,
    num_heads=1, linear_dim=-1, seed=None,
):  # fmt: skip
    """y = dropout(GN(x) * u): upstream's triton_norm_mul_dropout, its every argument; group_norm
    defaults to True here, the form this port is (False is refused: another port)."""
    _unported(concat_ux, group_norm=group_norm)
    return GroupNormMulDropoutFunction.apply(
        x, u, weight, bias, eps, dropout_ratio, training, False, num_heads, linear_dim, seed
    )
