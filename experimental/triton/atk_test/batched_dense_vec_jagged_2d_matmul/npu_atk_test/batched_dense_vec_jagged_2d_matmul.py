# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's Triton batched_dense_vec_jagged_2d_matmul (pytorch/FBGEMM, see
# README.md), written here. Upstream's program walks its sequence one row of values at a time,
# multiplying in the dtype and adding in fp32; this port loads BLOCK_L rows at once (upstream's
# launch: BLOCK_L 1), multiplies and adds in fp32, and with a program count (PROGRAMS) runs a few
# programs per core, each looping over tiles: the persistent form triton-ascend's guide asks of
# vector kernels.
"""Triton port of batched_dense_vec_jagged_2d_matmul: out[b * H + h] = dense[b * H + h] @ values_b[:, h]."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _dense_vec_jagged_matmul_kernel(
    dense_ptr, values_ptr, offsets_ptr, out_ptr, max_len, heads, D,
    stride_dense, stride_values, stride_out, col_blocks, tiles,
    BLOCK_L: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """out[bh, cols] = sum over l < min(L_b, max_len) of dense[bh, l] * values[o_b + l, h * D + cols]
    for one block of columns of one (sequence b, head h): bh = b * heads + h."""
    # Tiles are (column block, b * heads + h) pairs, column blocks first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), tiles, tl.num_programs(0)):
        pid_d = tile % col_blocks
        pid_bh = (tile // col_blocks).to(tl.int64)
        pid_b = pid_bh // heads
        pid_h = pid_bh % heads
        begin = tl.load(offsets_ptr + pid_b)
        length = tl.minimum(tl.load(offsets_ptr + pid_b + 1) - begin, max_len)
        cols = pid_d * BLOCK_D + tl.arange(0, BLOCK_D)
        in_cols = cols < D
        acc = tl.zeros((BLOCK_D,), dtype=tl.float32)
        for first in range(0, length, BLOCK_L):
            rows = first + tl.arange(0, BLOCK_L)
            in_rows = rows < length
            vector = tl.load(dense_ptr + pid_bh * stride_dense + rows, mask=in_rows, other=0.0)
            block = tl.load(
                values_ptr + (begin + rows)[:, None] * stride_values + pid_h * D + cols[None, :],
                mask=in_rows[:, None] & in_cols[None, :],
                other=0.0,
            )
            acc += tl.sum(vector.to(tl.float32)[:, None] * block.to(tl.float32), axis=0)
        tl.store(
            out_ptr + pid_bh * stride_out + cols, acc.to(out_ptr.dtype.element_ty), mask=in_cols
        )


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "fwd": [
            {
                "case": "b1024_n256_h4_d64_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 256, "H": 4, "D": 64},
                "config": {"BLOCK_L": 1, "BLOCK_D": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b2048_n512_h2_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 512, "H": 2, "D": 128},
                "config": {"BLOCK_L": 1, "BLOCK_D": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b256_n4096_h4_d128_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 256, "max_seq_len": 4096, "H": 4, "D": 128},
                "config": {"BLOCK_L": 1, "BLOCK_D": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "b512_n1024_h8_d64_fp32",
                "dtype": "float32",
                "shape": {"B": 512, "max_seq_len": 1024, "H": 8, "D": 64},
                "config": {"BLOCK_L": 1, "BLOCK_D": 64, "num_warps": 4, "PROGRAMS": 0},
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
_TILE_KEYS = {"fwd": {"BLOCK_D": "D", "BLOCK_L": "max_seq_len"}}
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
    """Upstream's launch: a row of values at a time, 32 columns a program, num_warps=4."""
    return {"BLOCK_L": 1, "BLOCK_D": 32, "num_warps": 4}


def batched_dense_vec_jagged_2d_matmul(dense, values, offset, *, config=None, check=False):
    """out [B * H, D]: dense [B * H, max_seq_len] (one row vector per sequence and head), values
    [sum_L, H * D] jagged with offsets `offset` [B + 1]; the rows past max_seq_len left out."""
    batch = offset.numel() - 1
    if _checked(check):
        if dense.dim() != 2 or values.dim() != 2:
            raise ValueError(
                f"dense must be [B * H, max_seq_len] and values [sum_L, H * D], got "
                f"{tuple(dense.shape)} and {tuple(values.shape)}"
            )
        if batch < 1 or dense.size(0) % batch or values.size(1) % (dense.size(0) // batch):
            raise ValueError(
                f"dense's {dense.size(0)} rows are not H per sequence of B={batch}, or values' "
                f"{values.size(1)} columns not H * D"
            )
        if dense.dtype != values.dtype:
            raise ValueError(
                f"dense and values must have one dtype, got {dense.dtype} and {values.dtype}"
            )
        _check_offsets(offset, values.size(0))
    heads = dense.size(0) // max(batch, 1)
    d = values.size(1) // max(heads, 1)
    max_len = dense.size(1)
    shape = {"B": batch, "max_seq_len": max_len, "H": heads, "D": d}
    blocks, options, programs = _programs_config("fwd", config, shape, values)
    out = torch.empty(batch * heads, d, dtype=values.dtype, device=values.device)
    if out.numel() == 0:
        return out
    col_blocks = triton.cdiv(d, blocks["BLOCK_D"])
    tiles = col_blocks * batch * heads
    _dense_vec_jagged_matmul_kernel[_grid(tiles, programs, values.device)](
        dense, values, offset, out, max_len, heads, d,
        dense.stride(0), values.stride(0), out.stride(0), col_blocks, tiles, **blocks, **options,
    )  # fmt: skip
    return out
