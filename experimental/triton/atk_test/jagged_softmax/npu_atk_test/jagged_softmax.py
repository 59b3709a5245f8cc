# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's Triton jagged_softmax (pytorch/FBGEMM, see README.md), written here.
# For each sequence b and column d, softmax over the first min(len_b, max_seq_len) rows; rows past
# max_seq_len are zero. Upstream runs one program per (sequence, column) and loads the whole
# sequence of one column in one tile (BLOCK_SIZE >= max_seq_len, strided loads). This port tiles
# columns too (BLOCK_D) and walks long sequences in BLOCK_L row blocks (online max and sum, then a
# second pass that writes), so both tiles are tunables; the zeros of truncated rows are written by
# the kernel (no zero-fill pass), and the statistics are accumulated in fp32 for every dtype. The
# grid is one program per (sequence, column block) tile, or with a program count (PROGRAMS) a few
# per core, each looping over tiles: the persistent form triton-ascend's guide asks of vector
# kernels.
"""Triton port of jagged_softmax: forward and backward over [sum_L, D] jagged tensors."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_softmax_fwd_kernel(
    x_ptr, y_ptr, offsets_ptr, max_seq_len, D,
    stride_xl, stride_xd, stride_yl, stride_yd, batch, d_blocks,
    BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    # Tiles are (sequence, column block) pairs, sequences first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), batch * d_blocks, tl.num_programs(0)):
        pid_b = tile % batch
        pid_d = tile // batch
        begin = tl.load(offsets_ptr + pid_b)
        length = tl.load(offsets_ptr + pid_b + 1) - begin
        n = tl.minimum(length, max_seq_len)
        offs_l = tl.arange(0, BLOCK_L)
        offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
        mask_d = offs_d < D
        x_ptrs = x_ptr + (begin + offs_l)[:, None] * stride_xl + offs_d[None, :] * stride_xd
        y_ptrs = y_ptr + (begin + offs_l)[:, None] * stride_yl + offs_d[None, :] * stride_yd
        if n <= BLOCK_L:
            # The whole (truncated) sequence in one tile: one read, one write.
            mask = (offs_l < n)[:, None] & mask_d[None, :]
            x = tl.load(x_ptrs, mask=mask, other=-float("inf")).to(tl.float32)
            e = tl.exp(x - tl.max(x, axis=0)[None, :])
            y = e / tl.sum(e, axis=0)[None, :]
            tl.store(y_ptrs, y.to(y_ptr.dtype.element_ty), mask=mask)
        else:
            m = tl.full([BLOCK_D], -float("inf"), tl.float32)
            s = tl.zeros([BLOCK_D], dtype=tl.float32)
            for start in range(0, n, BLOCK_L):
                mask = ((start + offs_l) < n)[:, None] & mask_d[None, :]
                x = tl.load(x_ptrs + start * stride_xl, mask=mask, other=-float("inf"))
                x = x.to(tl.float32)
                m_new = tl.maximum(m, tl.max(x, axis=0))
                s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new[None, :]), axis=0)
                m = m_new
            for start in range(0, n, BLOCK_L):
                mask = ((start + offs_l) < n)[:, None] & mask_d[None, :]
                x = tl.load(x_ptrs + start * stride_xl, mask=mask, other=-float("inf"))
                y = tl.exp(x.to(tl.float32) - m[None, :]) / s[None, :]
                tl.store(y_ptrs + start * stride_yl, y.to(y_ptr.dtype.element_ty), mask=mask)
        # Rows past max_seq_len: zeros, as upstream's zero-initialised output gives.
        zeros = tl.zeros([BLOCK_L, BLOCK_D], dtype=y_ptr.dtype.element_ty)
        for start in range(n, length, BLOCK_L):
            mask = ((start + offs_l) < length)[:, None] & mask_d[None, :]
            tl.store(y_ptrs + start * stride_yl, zeros, mask=mask)


@triton.jit
def _jagged_softmax_bwd_kernel(
    dy_ptr, y_ptr, dx_ptr, offsets_ptr, max_seq_len, D,
    stride_dyl, stride_dyd, stride_yl, stride_yd, stride_dxl, stride_dxd, batch, d_blocks,
    BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    # Tiles are (sequence, column block) pairs, sequences first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), batch * d_blocks, tl.num_programs(0)):
        pid_b = tile % batch
        pid_d = tile // batch
        begin = tl.load(offsets_ptr + pid_b)
        length = tl.load(offsets_ptr + pid_b + 1) - begin
        n = tl.minimum(length, max_seq_len)
        offs_l = tl.arange(0, BLOCK_L)
        offs_d = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
        mask_d = offs_d < D
        rows = (begin + offs_l)[:, None]
        dy_ptrs = dy_ptr + rows * stride_dyl + offs_d[None, :] * stride_dyd
        y_ptrs = y_ptr + rows * stride_yl + offs_d[None, :] * stride_yd
        dx_ptrs = dx_ptr + rows * stride_dxl + offs_d[None, :] * stride_dxd
        if n <= BLOCK_L:
            mask = (offs_l < n)[:, None] & mask_d[None, :]
            dy = tl.load(dy_ptrs, mask=mask, other=0.0).to(tl.float32)
            y = tl.load(y_ptrs, mask=mask, other=0.0).to(tl.float32)
            dx = (dy - tl.sum(dy * y, axis=0)[None, :]) * y
            tl.store(dx_ptrs, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        else:
            acc = tl.zeros([BLOCK_D], dtype=tl.float32)
            for start in range(0, n, BLOCK_L):
                mask = ((start + offs_l) < n)[:, None] & mask_d[None, :]
                dy = tl.load(dy_ptrs + start * stride_dyl, mask=mask, other=0.0).to(tl.float32)
                y = tl.load(y_ptrs + start * stride_yl, mask=mask, other=0.0).to(tl.float32)
                acc += tl.sum(dy * y, axis=0)
            for start in range(0, n, BLOCK_L):
                mask = ((start + offs_l) < n)[:, None] & mask_d[None, :]
                dy = tl.load(dy_ptrs + start * stride_dyl, mask=mask, other=0.0).to(tl.float32)
                y = tl.load(y_ptrs + start * stride_yl, mask=mask, other=0.0).to(tl.float32)
                dx = (dy - acc[None, :]) * y
                tl.store(dx_ptrs + start * stride_dxl, dx.to(dx_ptr.dtype.element_ty), mask=mask)
        # Rows past max_seq_len do not reach the output: zero gradient.
        zeros = tl.zeros([BLOCK_L, BLOCK_D], dtype=dx_ptr.dtype.element_ty)
        for start in range(n, length, BLOCK_L):
            mask = ((start + offs_l) < length)[:, None] & mask_d[None, :]
            tl.store(dx_ptrs + start * stride_dxl, zeros, mask=mask)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_n1024_d128_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 1024, "D": 128},
                "config": {
                    "BLOCK_L": 64,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b2048_n256_d64_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "D": 64},
                "config": {
                    "BLOCK_L": 128,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b2048_n512_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256},
                "config": {
                    "BLOCK_L": 128,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b512_n4096_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 4096, "D": 64},
                "config": {
                    "BLOCK_L": 256,
                    "BLOCK_D": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
        ],
        "fwd": [
            {
                "case": "b1024_n1024_d128_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 1024, "D": 128},
                "config": {
                    "BLOCK_L": 128,
                    "BLOCK_D": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b2048_n256_d64_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "D": 64},
                "config": {
                    "BLOCK_L": 64,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b2048_n512_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256},
                "config": {
                    "BLOCK_L": 64,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b512_n4096_d64_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 4096, "D": 64},
                "config": {
                    "BLOCK_L": 256,
                    "BLOCK_D": 32,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
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
_CONSTEXPRS = ("BLOCK_D", "BLOCK_L")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_L": "max_seq_len", "BLOCK_D": "D"},
    "bwd": {"BLOCK_L": "max_seq_len", "BLOCK_D": "D"},
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


def _programs_config(kernel, config, shape, tensor):
    """_configure's (constexprs, launch options) and the config's program count: PROGRAMS
    programs per core, or 0 (a config that names none) for one program per block."""
    if config is None:
        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))
        default = default_config(kernel, shape)
        config = _pick_config(kernel, shape, dtype, tensor.device, default)
    return (*_configure(kernel, config, shape, tensor), config.get("PROGRAMS", 0))


_CORES = {}  # device -> its core count, read once (a launch must not wait for it)


def _cores(device):
    """The cores a program count counts in: an Ascend NPU's vector cores (triton-ascend's
    `num_vectorcore`; these kernels have no tl.dot), a GPU's SMs, the host's CPUs for the
    interpreter (which runs programs one after another)."""
    if device not in _CORES:
        if device.type == "npu":
            from triton.runtime import driver

            properties = driver.active.utils.get_device_properties(device.index or 0)
            _CORES[device] = properties["num_vectorcore"]
        elif device.type == "cuda":
            _CORES[device] = torch.cuda.get_device_properties(device).multi_processor_count
        else:
            _CORES[device] = os.cpu_count() or 1
    return _CORES[device]


def _grid(blocks, programs, device):
    """The 1-D grid of a launch over `blocks` blocks: one program per block for `programs` 0,
    else `programs` per core, at most one per block (the kernel loops over its blocks)."""
    if not programs:
        return (max(1, blocks),)
    return (max(1, min(blocks, programs * _cores(device))),)


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's launch, both kernels: one column per program (BLOCK_D = 1), the whole sequence in
    one tile (BLOCK_L = max(next_power_of_2(max_seq_len), 8)), Triton's num_warps=4."""
    return {
        "BLOCK_L": max(triton.next_power_of_2(int(shape["max_seq_len"])), 8),
        "BLOCK_D": 1,
        "num_warps": 4,
    }


def _check_inputs(x, offsets, max_seq_len, *others):
    if x.dim() != 2:
        raise ValueError(f"x must be [sum_L, D], got {tuple(x.shape)}")
    if int(max_seq_len) < 0:
        raise ValueError(f"max_seq_len must be non-negative, got {max_seq_len}")
    for other in others:
        if other.shape != x.shape or other.dtype != x.dtype:
            raise ValueError(
                f"tensors must share x's shape {tuple(x.shape)} and dtype {x.dtype}, "
                f"got {tuple(other.shape)} {other.dtype}"
            )
    _check_offsets(offsets, x.size(0))


def jagged_softmax_forward(x, x_offsets, max_seq_len, *, config=None, check=False):
    """y [sum_L, D]: softmax over each sequence's first min(len, max_seq_len) rows, zeros past it."""
    if _checked(check):
        _check_inputs(x, x_offsets, max_seq_len)
    batch, d = x_offsets.numel() - 1, x.size(1)
    shape = {"B": batch, "max_seq_len": int(max_seq_len), "D": d}
    blocks, options, programs = _programs_config("fwd", config, shape, x)
    y = torch.empty_like(x)
    if y.numel() == 0:
        return y
    d_blocks = triton.cdiv(d, blocks["BLOCK_D"])
    _jagged_softmax_fwd_kernel[_grid(batch * d_blocks, programs, x.device)](
        x, y, x_offsets, int(max_seq_len), d,
        x.stride(0), x.stride(1), y.stride(0), y.stride(1), batch, d_blocks,
        **blocks, **options,
    )  # fmt: skip
    return y


def jagged_softmax_backward(grad_output, y, x_offsets, max_seq_len, *, config=None, check=False):
    """dx [sum_L, D] = (dy - sum_l(dy * y)) * y per sequence and column; zeros past max_seq_len."""
    if _checked(check):
        _check_inputs(y, x_offsets, max_seq_len, grad_output)
    batch, d = x_offsets.numel() - 1, y.size(1)
    shape = {"B": batch, "max_seq_len": int(max_seq_len), "D": d}
    blocks, options, programs = _programs_config("bwd", config, shape, y)
    grad = torch.empty_like(y)
    if grad.numel() == 0:
        return grad
    d_blocks = triton.cdiv(d, blocks["BLOCK_D"])
    _jagged_softmax_bwd_kernel[_grid(batch * d_blocks, programs, y.device)](
        grad_output, y, grad, x_offsets, int(max_seq_len), d,
        grad_output.stride(0), grad_output.stride(1), y.stride(0), y.stride(1),
        grad.stride(0), grad.stride(1), batch, d_blocks,
        **blocks, **options,
    )  # fmt: skip
    return grad


class JaggedSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, x_offsets, max_seq_len):
        y = jagged_softmax_forward(x, x_offsets, max_seq_len)
        ctx.save_for_backward(y, x_offsets)
        ctx.max_seq_len = max_seq_len
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, x_offsets = ctx.saved_tensors
        grad = jagged_softmax_backward(grad_output.contiguous(), y, x_offsets, ctx.max_seq_len)
        return grad, None, None


def jagged_softmax(x, x_offsets, max_seq_len):
    """Same call as upstream's `jagged_softmax(..., use_fbgemm_kernel=False)`: x [sum_L, D]."""
    return JaggedSoftmax.apply(x, x_offsets, max_seq_len)
