# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's Triton jagged + jagged and jagged * jagged (triton_jagged_add_jagged,
# triton_jagged_mul_jagged: pytorch/FBGEMM, see README.md), written here. Upstream launches one
# program per 32 x 32 tile with the shapes and strides as constexprs (a compile per shape); this
# port takes them as arguments, and with a program count (PROGRAMS) runs a few programs per core,
# each looping over tiles: the persistent form triton-ascend's guide asks of vector kernels, and
# the way past Ascend's 65535 blocks a launch may have.
"""Triton port of jagged_jagged_elementwise: x + y and x * y over the [N, D] values of two jagged tensors."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_jagged_elementwise_kernel(
    x_ptr, y_ptr, out_ptr, N, D,
    stride_xn, stride_xd, stride_yn, stride_yd, stride_on, stride_od, col_blocks, tiles,
    OPERATION: tl.constexpr, BLOCK_ROW: tl.constexpr, BLOCK_COL: tl.constexpr,
):  # fmt: skip
    """out = x + y (OPERATION "add") or x * y ("mul") over one BLOCK_ROW x BLOCK_COL tile."""
    # Tiles are (row block, column block) pairs, column blocks first; a program takes every
    # num_programs-th (one, in the classic grid of one program per tile).
    for tile in range(tl.program_id(0), tiles, tl.num_programs(0)):
        pid_n = (tile // col_blocks).to(tl.int64)
        pid_d = tile % col_blocks
        offs_n = pid_n * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
        offs_d = pid_d * BLOCK_COL + tl.arange(0, BLOCK_COL)
        mask = (offs_n[:, None] < N) & (offs_d[None, :] < D)
        x = tl.load(x_ptr + offs_n[:, None] * stride_xn + offs_d[None, :] * stride_xd, mask=mask)
        y = tl.load(y_ptr + offs_n[:, None] * stride_yn + offs_d[None, :] * stride_yd, mask=mask)
        # In fp32, rounded once to the dtype: the exact sum or product of two fp16 or bf16
        # values fits fp32, so this is upstream's result in the dtype.
        x, y = x.to(tl.float32), y.to(tl.float32)
        out = (x + y if OPERATION == "add" else x * y).to(out_ptr.dtype.element_ty)
        tl.store(
            out_ptr + offs_n[:, None] * stride_on + offs_d[None, :] * stride_od, out, mask=mask
        )


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "add": [
            {
                "case": "n131072_d1024_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 1024},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n131072_d512_fp32",
                "dtype": "float32",
                "shape": {"N": 131072, "D": 512},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n262144_d256_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 256},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n524288_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 524288, "D": 256},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
        ],
        "mul": [
            {
                "case": "n131072_d1024_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 1024},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n131072_d512_fp32",
                "dtype": "float32",
                "shape": {"N": 131072, "D": 512},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n262144_d256_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 256},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
            },
            {
                "case": "n524288_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 524288, "D": 256},
                "config": {"BLOCK_ROW": 32, "BLOCK_COL": 64, "num_warps": 4, "PROGRAMS": 0},
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
    "add": {"BLOCK_COL": "D", "BLOCK_ROW": "N"},
    "mul": {"BLOCK_COL": "D", "BLOCK_ROW": "N"},
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
    """Upstream's launch: 32 x 32 thread blocks and Triton's num_warps=4 (add and mul)."""
    return {"BLOCK_ROW": 32, "BLOCK_COL": 32, "num_warps": 4}


def _elementwise(kernel, x, y, config, check):
    if _checked(check):
        if x.dim() != 2 or x.shape != y.shape:
            raise ValueError(
                f"x and y must be [N, D] of one shape, got {tuple(x.shape)} and {tuple(y.shape)}"
            )
        if x.dtype != y.dtype:
            raise ValueError(f"x and y must have one dtype, got {x.dtype} and {y.dtype}")
    n, d = x.shape
    blocks, options, programs = _programs_config(kernel, config, {"N": n, "D": d}, x)
    out = torch.empty_like(x)
    if out.numel() == 0:
        return out
    col_blocks = triton.cdiv(d, blocks["BLOCK_COL"])
    tiles = triton.cdiv(n, blocks["BLOCK_ROW"]) * col_blocks
    _jagged_jagged_elementwise_kernel[_grid(tiles, programs, x.device)](
        x, y, out, n, d, x.stride(0), x.stride(1), y.stride(0), y.stride(1), out.stride(0),
        out.stride(1), col_blocks, tiles, OPERATION=kernel, **blocks, **options,
    )  # fmt: skip
    return out


def jagged_jagged_elementwise_add(x, y, *, config=None, check=False):
    """x + y: the [N, D] values of two jagged tensors of one layout (the same offsets)."""
    return _elementwise("add", x, y, config, check)


def jagged_jagged_elementwise_mul(x, y, *, config=None, check=False):
    """x * y: the [N, D] values of two jagged tensors of one layout (the same offsets)."""
    return _elementwise("mul", x, y, config, check)


def triton_jagged_add_jagged(x, y):
    """Upstream's call."""
    return jagged_jagged_elementwise_add(x, y)


def triton_jagged_mul_jagged(x, y):
    """Upstream's call."""
    return jagged_jagged_elementwise_mul(x, y)
