# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton jagged_dense_broadcast_add (NVIDIA/recsys-examples,
# examples/commons/ops/triton_ops/triton_jagged.py, see README.md), written here:
# out[rows of b] = x[rows of b] + y[b]. The backward is upstream's: dx = dout itself, and
# dy[b] = the rows of dout in sequence b summed (its jagged_reduce_sum). Differences from
# upstream: a program count (PROGRAMS programs per core walking the blocks, or one per block, at
# most 32768: an Ascend launch takes at most 65535 blocks), a 1-D grid in upstream's block order
# or (GRID "rows") over row blocks of the jagged rows, each row's sequence found by a binary
# search of the offsets, so that no block is empty; every row is computed, also those of a
# sequence longer than max_seq_len (upstream leaves them unwritten); the sum takes BLOCK_N rows a
# step (upstream: one); the add in fp32; the config passed per launch from the frozen configs
# below (upstream: Triton's autotuner for the forward).
"""Triton port of jagged_dense_broadcast_add: its forward and its backward's reduce-sum."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch; below it, one block per program (upstream's grid).
MAX_PROGRAMS = 32768


@triton.jit
def _jagged_dense_add_kernel(
    offsets_ptr, x_ptr, y_ptr, out_ptr, max_seq_len, batch, total_rows, D, num_programs,
    search_steps, stride_xn, stride_yb, stride_on, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
    BY_ROWS: tl.constexpr,
):  # fmt: skip
    """out[rows of b] = x[rows of b] + y[b]: x and out [sum_L, D] jagged, y [B, D]; over
    upstream's blocks (sequences by max_seq_len's row blocks) or, BY_ROWS, over row blocks of
    the jagged rows."""
    if BY_ROWS:
        _add_by_rows(offsets_ptr, x_ptr, y_ptr, out_ptr, batch, total_rows, D, num_programs,
                     search_steps, stride_xn, stride_yb, stride_on, BLOCK_N, BLOCK_D)  # fmt: skip
    else:
        _add_by_sequences(offsets_ptr, x_ptr, y_ptr, out_ptr, max_seq_len, batch, D,
                          num_programs, stride_xn, stride_yb, stride_on, BLOCK_N, BLOCK_D)  # fmt: skip


@triton.jit
def _add_by_sequences(
    offsets_ptr, x_ptr, y_ptr, out_ptr, max_seq_len, batch, D, num_programs,
    stride_xn, stride_yb, stride_on, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """The blocks are upstream's grid in its launch order (sequences, then the row blocks of
    max_seq_len), each all of D, BLOCK_D columns at a time; a block's program also does the row
    blocks max_seq_len rows further on of a sequence longer than max_seq_len."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(max_seq_len, BLOCK_N)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, batch * tiles_n, num_programs):
        seq = tile % batch
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        y_row = y_ptr + seq.to(tl.int64) * stride_yb
        for start in range((tile // batch) * BLOCK_N, seqlen, tiles_n * BLOCK_N):
            rows = start + offs_n
            mask_n = rows < seqlen
            x_rows = x_ptr + (begin + rows)[:, None] * stride_xn
            out_rows = out_ptr + (begin + rows)[:, None] * stride_on
            for first in range(0, D, BLOCK_D):
                cols = first + offs_d
                mask_d = cols < D
                mask = mask_n[:, None] & mask_d[None, :]
                x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
                y = tl.load(y_row + cols, mask=mask_d, other=0.0).to(tl.float32)
                tl.store(out_rows + cols[None, :], (x + y[None, :]).to(out_ptr.dtype.element_ty),
                         mask=mask)  # fmt: skip


@triton.jit
def _add_by_rows(
    offsets_ptr, x_ptr, y_ptr, out_ptr, batch, total_rows, D, num_programs, search_steps,
    stride_xn, stride_yb, stride_on, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """The blocks are BLOCK_N consecutive rows of x, none empty whatever the lengths; a row's
    sequence is the last b with offsets[b] <= row, found by halving [0, B) search_steps =
    ceil(log2(B)) times (B + 1 offsets, loads that stay in cache), and y is read per row."""
    pid = tl.program_id(0)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for start in range(pid * BLOCK_N, total_rows, num_programs * BLOCK_N):
        rows = start + offs_n
        mask_n = rows < total_rows
        low = tl.zeros([BLOCK_N], dtype=tl.int32)
        high = tl.zeros([BLOCK_N], dtype=tl.int32) + batch
        for _ in range(search_steps):
            mid = (low + high) // 2
            below = tl.load(offsets_ptr + mid) <= rows
            low = tl.where(below, mid, low)
            high = tl.where(below, high, mid)
        rows64 = rows.to(tl.int64)
        x_rows = x_ptr + rows64[:, None] * stride_xn
        out_rows = out_ptr + rows64[:, None] * stride_on
        y_rows = y_ptr + low.to(tl.int64)[:, None] * stride_yb
        for first in range(0, D, BLOCK_D):
            cols = first + offs_d
            mask = mask_n[:, None] & (cols < D)[None, :]
            x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            y = tl.load(y_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
            tl.store(out_rows + cols[None, :], (x + y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _jagged_reduce_sum_kernel(
    offsets_ptr, x_ptr, out_ptr, batch, D, num_programs, stride_xn, stride_ob,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """out[b] = the rows of x in sequence b summed: x [sum_L, D] jagged, out [B, D] (zeros for
    an empty sequence); fp32 accumulation, BLOCK_N rows a step.

    The blocks are upstream's grid in its launch order (sequences, then D's column blocks)."""
    pid = tl.program_id(0)
    tiles_d = tl.cdiv(D, BLOCK_D)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, batch * tiles_d, num_programs):
        seq = tile % batch
        cols = (tile // batch) * BLOCK_D + offs_d
        mask_d = cols < D
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        acc = tl.zeros([BLOCK_N, BLOCK_D], dtype=tl.float32)
        for start in range(0, seqlen, BLOCK_N):
            rows = start + offs_n
            mask = (rows < seqlen)[:, None] & mask_d[None, :]
            tile_ptrs = x_ptr + (begin + rows)[:, None] * stride_xn + cols[None, :]
            acc += tl.load(tile_ptrs, mask=mask, other=0.0).to(tl.float32)
        total = tl.sum(acc, axis=0)
        out = out_ptr + seq.to(tl.int64) * stride_ob + cols
        tl.store(out, total.to(out_ptr.dtype.element_ty), mask=mask_d)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_n512_d256_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256},
                "config": {
                    "BLOCK_N": 2,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b2048_n1024_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 1024, "D": 256},
                "config": {
                    "BLOCK_N": 1,
                    "BLOCK_D": 128,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b256_n4096_d128_fp32",
                "dtype": "float32",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128},
                "config": {
                    "BLOCK_N": 2,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
            {
                "case": "b512_n1024_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256},
                "config": {
                    "BLOCK_N": 2,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 3,
                    "PROGRAMS": 0,
                },
            },
        ],
        "fwd": [
            {
                "case": "b1024_n512_d256_fp16",
                "dtype": "float16",
                "shape": {"B": 1024, "max_seq_len": 512, "D": 256},
                "config": {
                    "BLOCK_N": 16,
                    "BLOCK_D": 128,
                    "num_warps": 2,
                    "num_stages": 2,
                    "PROGRAMS": 0,
                    "GRID": "sequences",
                },
            },
            {
                "case": "b2048_n1024_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 2048, "max_seq_len": 1024, "D": 256},
                "config": {
                    "BLOCK_N": 8,
                    "BLOCK_D": 128,
                    "num_warps": 2,
                    "num_stages": 1,
                    "PROGRAMS": 0,
                    "GRID": "rows",
                },
            },
            {
                "case": "b256_n4096_d128_fp32",
                "dtype": "float32",
                "shape": {"B": 256, "max_seq_len": 4096, "D": 128},
                "config": {
                    "BLOCK_N": 16,
                    "BLOCK_D": 64,
                    "num_warps": 4,
                    "num_stages": 1,
                    "PROGRAMS": 0,
                    "GRID": "rows",
                },
            },
            {
                "case": "b512_n1024_d256_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256},
                "config": {
                    "BLOCK_N": 16,
                    "BLOCK_D": 128,
                    "num_warps": 2,
                    "num_stages": 1,
                    "PROGRAMS": 0,
                    "GRID": "sequences",
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
_CONSTEXPRS = ("BLOCK_D", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_N": "max_seq_len", "BLOCK_D": "D"},
    "bwd": {"BLOCK_N": "max_seq_len", "BLOCK_D": "D"},
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


def _upstream_block_d(d: int) -> int:
    """Upstream's BLOCK_D of both kernels: next_pow2(D) below 64, else 64."""
    return triton.next_power_of_2(d) if d < 64 else 64


def default_config(kernel: str, shape: dict) -> dict:
    """fwd: the first config of upstream's _get_jagged_dense_broadcast_add_configs (its
    autotuner's pick among 18 is a timing on the GPU); bwd: upstream's jagged_reduce_sum, one
    row a step at Triton's default warps and stages. Both with upstream's BLOCK_D."""
    block_d = _upstream_block_d(shape["D"])
    if kernel == "fwd":
        return {"BLOCK_N": 16, "BLOCK_D": block_d, "num_warps": 2, "num_stages": 1}
    if kernel == "bwd":
        return {"BLOCK_N": 1, "BLOCK_D": block_d, "num_warps": 4, "num_stages": 3}
    raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd")


def _shape(batch: int, max_seq_len: int, d: int) -> dict:
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d}


def _check_inputs(x, y, offsets, dout=None):
    if x.dim() != 2 or y.dim() != 2:
        raise ValueError("expected x: [sum_L, D], y: [B, D]")
    batch, d = y.shape
    if x.size(1) != d:
        raise ValueError(f"x {tuple(x.shape)} must be [sum_L, {d}] for y {tuple(y.shape)}")
    if offsets.numel() != batch + 1:
        raise ValueError(f"offsets has {offsets.numel()} entries, expected B + 1 = {batch + 1}")
    if x.dtype != y.dtype:
        raise ValueError("x and y must share one dtype")
    if dout is not None and (dout.shape != x.shape or dout.dtype != x.dtype):
        raise ValueError(f"dout {tuple(dout.shape)} must be x's shape {tuple(x.shape)} and dtype")
    _check_offsets(offsets, x.size(0))


def _fwd_config(config, shape, tensor):
    """(constexpr blocks, launch options, programs, BY_ROWS) of the given or picked config:
    GRID "rows" runs the forward over row blocks of the jagged rows, "sequences" (a config that
    names none) over upstream's grid."""
    if config is None:
        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))
        config = _pick_config("fwd", shape, dtype, tensor.device, default_config("fwd", shape))
    return (*_programs_config("fwd", config, shape, tensor), config.get("GRID") == "rows")


def jagged_dense_broadcast_add_fwd(x, y, offsets, max_seq_len, *, config=None, check=False):
    """x [sum_L, D] jagged + y [B, D], each row plus its sequence's row of y -> [sum_L, D]."""
    if _checked(check):
        _check_inputs(x, y, offsets)
    x, y = x.contiguous(), y.contiguous()
    batch, d = y.shape
    blocks, options, programs, by_rows = _fwd_config(config, _shape(batch, max_seq_len, d), x)
    out = torch.empty_like(x)
    if out.numel() == 0:
        return out
    rows = max(int(max_seq_len), 1)  # upstream's grid: row blocks per sequence (at least one)
    per_block = blocks["BLOCK_N"]
    tiles = triton.cdiv(x.size(0), per_block) if by_rows else batch * triton.cdiv(rows, per_block)
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, x.device)
    _jagged_dense_add_kernel[grid](
        offsets, x, y, out, rows, batch, x.size(0), d, grid[0], (batch - 1).bit_length(),
        x.stride(0), y.stride(0), out.stride(0), BY_ROWS=by_rows, **blocks, **options,
    )  # fmt: skip
    return out


def jagged_reduce_sum(dout, offsets, max_seq_len, *, config=None):
    """dy [B, D]: the rows of dout [sum_L, D] in each sequence summed (upstream's
    jagged_reduce_sum); max_seq_len keys the config only."""
    dout = dout.contiguous()
    batch, d = offsets.numel() - 1, dout.size(1)
    blocks, options, programs = _programs_config("bwd", config, _shape(batch, max_seq_len, d), dout)
    dy = torch.empty(batch, d, dtype=dout.dtype, device=dout.device)
    if dy.numel() == 0:
        return dy
    tiles = batch * triton.cdiv(d, blocks["BLOCK_D"])
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, dout.device)
    _jagged_reduce_sum_kernel[grid](
        offsets, dout, dy, batch, d, grid[0], dout.stride(0), dy.stride(0), **blocks, **options
    )
    return dy


def jagged_dense_broadcast_add_bwd(x, y, offsets, max_seq_len, dout, *, config=None, check=False):
    """(dx, dy) for the output gradient dout [sum_L, D]: dx is dout itself (upstream's too)."""
    if _checked(check):
        _check_inputs(x, y, offsets, dout)
    return dout, jagged_reduce_sum(dout, offsets, max_seq_len, config=config)


class JaggedDenseBroadcastAddFunction(torch.autograd.Function):
    """Autograd of the port (upstream's _JaggedDenseBroadcastAddFunction)."""

    @staticmethod
    def forward(ctx, max_seq_len, seq_offsets, jagged, dense):
        ctx.save_for_backward(seq_offsets)
        ctx.max_seq_len = max_seq_len
        return jagged_dense_broadcast_add_fwd(jagged, dense, seq_offsets, max_seq_len)

    @staticmethod
    def backward(ctx, d_out):
        (seq_offsets,) = ctx.saved_tensors
        return None, None, d_out, jagged_reduce_sum(d_out, seq_offsets, ctx.max_seq_len)


def jagged_dense_broadcast_add(max_seq_len, seq_offsets, jagged, dense):
    """Upstream's triton_jagged_dense_broadcast_add(max_seq_len, seq_offsets, jagged, dense):
    jagged [sum_L, D] + dense [B, D] per sequence, differentiable."""
    return JaggedDenseBroadcastAddFunction.apply(max_seq_len, seq_offsets, jagged, dense)
