# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's SLL jagged_dense_elementwise_add, Triton path (pytorch/FBGEMM, see
# README.md), written here. Upstream runs one program per sequence that walks all of its rows
# (dense_to_jagged with a fused add, jagged_to_dense for the backward); this port spreads row
# blocks over programs as well (tiles: row blocks x sequences), adds in fp32, and writes the
# backward's zero padding in the kernel. The grid is one program per tile, or with a program count
# (PROGRAMS) a few per core, each looping over tiles: the persistent form triton-ascend's guide
# asks of vector kernels.
"""Triton port of jagged_dense_elementwise_add: jagged x + padded dense y -> jagged, and its backward."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_dense_add_kernel(
    x_ptr, offsets_ptr, y_ptr, out_ptr, max_len, D,
    stride_xl, stride_xd, stride_yb, stride_yl, stride_yd, stride_ol, stride_od, row_blocks, tiles,
    BLOCK_ROW: tl.constexpr, BLOCK_COL: tl.constexpr,
):  # fmt: skip
    """out[begin + l] = x[begin + l] + y[b, l] (l < max_len), = x[begin + l] beyond max_len."""
    # Tiles are (row block, sequence) pairs, row blocks first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), tiles, tl.num_programs(0)):
        pid_r = tile % row_blocks
        pid_b = (tile // row_blocks).to(tl.int64)
        begin = tl.load(offsets_ptr + pid_b)
        length = tl.load(offsets_ptr + pid_b + 1) - begin
        # Rows past the tiles' (max_len) rows are kept: the tiles of a sequence stride over them.
        step = row_blocks * BLOCK_ROW
        for start_r in range(pid_r * BLOCK_ROW, length, step):
            offs_r = start_r + tl.arange(0, BLOCK_ROW)
            in_seq = offs_r < length
            in_dense = in_seq & (offs_r < max_len)
            for start_c in range(0, D, BLOCK_COL):
                offs_c = start_c + tl.arange(0, BLOCK_COL)
                mask_c = offs_c < D
                x = tl.load(
                    x_ptr + (begin + offs_r)[:, None] * stride_xl + offs_c[None, :] * stride_xd,
                    mask=in_seq[:, None] & mask_c[None, :],
                    other=0.0,
                )
                y = tl.load(
                    y_ptr
                    + pid_b * stride_yb
                    + offs_r[:, None] * stride_yl
                    + offs_c[None, :] * stride_yd,
                    mask=in_dense[:, None] & mask_c[None, :],
                    other=0.0,
                )
                out = x.to(tl.float32) + y.to(tl.float32)
                tl.store(
                    out_ptr + (begin + offs_r)[:, None] * stride_ol + offs_c[None, :] * stride_od,
                    out.to(out_ptr.dtype.element_ty),
                    mask=in_seq[:, None] & mask_c[None, :],
                )


@triton.jit
def _jagged_to_dense_grad_kernel(
    dout_ptr, offsets_ptr, dy_ptr, max_len, D,
    stride_gl, stride_gd, stride_yb, stride_yl, stride_yd, row_blocks, tiles,
    BLOCK_ROW: tl.constexpr, BLOCK_COL: tl.constexpr,
):  # fmt: skip
    """dy[b, l] = dout[begin + l] for l < min(len_b, max_len), else 0 (padding written here)."""
    # Tiles are (row block, sequence) pairs, row blocks first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), tiles, tl.num_programs(0)):
        pid_r = tile % row_blocks
        pid_b = (tile // row_blocks).to(tl.int64)
        begin = tl.load(offsets_ptr + pid_b)
        length = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_len)
        offs_r = pid_r * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
        in_seq = offs_r < length
        in_dense = offs_r < max_len
        for start_c in range(0, D, BLOCK_COL):
            offs_c = start_c + tl.arange(0, BLOCK_COL)
            mask_c = offs_c < D
            g = tl.load(
                dout_ptr + (begin + offs_r)[:, None] * stride_gl + offs_c[None, :] * stride_gd,
                mask=in_seq[:, None] & mask_c[None, :],
                other=0.0,
            )
            tl.store(
                dy_ptr
                + pid_b * stride_yb
                + offs_r[:, None] * stride_yl
                + offs_c[None, :] * stride_yd,
                g,
                mask=in_dense[:, None] & mask_c[None, :],
            )


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
                "config": {"BLOCK_ROW": 8, "BLOCK_COL": 128, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b2048_n256_d64_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "D": 64},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b2048_n512_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256},
                "config": {"BLOCK_ROW": 8, "BLOCK_COL": 256, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b512_n4096_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 4096, "D": 128},
                "config": {"BLOCK_ROW": 16, "BLOCK_COL": 128, "num_warps": 4, "PROGRAMS": 0},
            },
        ],
        "fwd": [
            {
                "case": "b1024_n1024_d128_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 1024, "D": 128},
                "config": {"BLOCK_ROW": 8, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b2048_n256_d64_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 256, "D": 64},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b2048_n512_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "D": 256},
                "config": {"BLOCK_ROW": 16, "BLOCK_COL": 128, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b512_n4096_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 4096, "D": 128},
                "config": {"BLOCK_ROW": 16, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
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
_CONSTEXPRS = ("BLOCK_COL", "BLOCK_ROW")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_COL": "D", "BLOCK_ROW": "max_seq_len"},
    "bwd": {"BLOCK_COL": "D", "BLOCK_ROW": "max_seq_len"},
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
    """Upstream's launch: 32 x 32 thread blocks and Triton's num_warps=4 (forward and backward)."""
    return {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4}


def jagged_dense_elementwise_add_fwd(x, x_offsets, y, *, config=None, check=False):
    """x [sum_L, D] jagged, y [B, max_seq_len, D] dense -> x + y as a jagged [sum_L, D]."""
    if _checked(check):
        if x.dim() != 2 or y.dim() != 3:
            raise ValueError(
                f"x must be [sum_L, D] and y [B, max_seq_len, D], got {tuple(x.shape)} and {tuple(y.shape)}"
            )
        if y.size(0) != x_offsets.numel() - 1 or y.size(2) != x.size(1):
            raise ValueError(
                f"y {tuple(y.shape)} does not match B={x_offsets.numel() - 1}, D={x.size(1)}"
            )
        if x.dtype != y.dtype:
            raise ValueError(f"x and y must have one dtype, got {x.dtype} and {y.dtype}")
        _check_offsets(x_offsets, x.size(0))
    batch, max_len, d = y.shape
    shape = {"B": batch, "max_seq_len": max_len, "D": d}
    blocks, options, programs = _programs_config("fwd", config, shape, x)
    out = torch.empty_like(x)
    if out.numel() == 0:
        return out
    row_blocks = max(1, triton.cdiv(max_len, blocks["BLOCK_ROW"]))
    tiles = row_blocks * batch
    _jagged_dense_add_kernel[_grid(tiles, programs, x.device)](
        x, x_offsets, y, out, max_len, d,
        x.stride(0), x.stride(1), y.stride(0), y.stride(1), y.stride(2), out.stride(0), out.stride(1),
        row_blocks, tiles, **blocks, **options,
    )  # fmt: skip
    return out


def jagged_dense_elementwise_add_bwd(
    grad_output, x_offsets, max_seq_len, *, config=None, check=False
):
    """(dx, dy): dx is grad_output itself, dy [B, max_seq_len, D] its padded (zeros) dense form."""
    max_len = int(max_seq_len)
    if _checked(check):
        if grad_output.dim() != 2:
            raise ValueError(f"grad_output must be [sum_L, D], got {tuple(grad_output.shape)}")
        if max_len < 0:
            raise ValueError(f"max_seq_len must be non-negative, got {max_len}")
        _check_offsets(x_offsets, grad_output.size(0))
    batch, d = x_offsets.numel() - 1, grad_output.size(1)
    shape = {"B": batch, "max_seq_len": max_len, "D": d}
    blocks, options, programs = _programs_config("bwd", config, shape, grad_output)
    dy = torch.empty(batch, max_len, d, dtype=grad_output.dtype, device=grad_output.device)
    if dy.numel() == 0:
        return grad_output, dy
    row_blocks = triton.cdiv(max_len, blocks["BLOCK_ROW"])
    tiles = row_blocks * batch
    _jagged_to_dense_grad_kernel[_grid(tiles, programs, grad_output.device)](
        grad_output, x_offsets, dy, max_len, d,
        grad_output.stride(0), grad_output.stride(1), dy.stride(0), dy.stride(1), dy.stride(2),
        row_blocks, tiles, **blocks, **options,
    )  # fmt: skip
    return grad_output, dy


class JaggedDenseAdd(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, x_offsets, y, max_seq_len):
        ctx.save_for_backward(x_offsets)
        ctx.max_seq_len = max_seq_len
        return jagged_dense_elementwise_add_fwd(x, x_offsets, y)

    @staticmethod
    def backward(ctx, grad_output):
        (offsets,) = ctx.saved_tensors
        dx, dy = jagged_dense_elementwise_add_bwd(
            grad_output.contiguous(), offsets, ctx.max_seq_len
        )
        return dx, None, dy, None


def jagged_dense_elementwise_add(x, x_offsets, y, max_seq_len, use_fbgemm_kernel=False):
    """Upstream's call; the port is always the Triton path (`use_fbgemm_kernel` is ignored)."""
    return JaggedDenseAdd.apply(x, x_offsets, y, max_seq_len)
