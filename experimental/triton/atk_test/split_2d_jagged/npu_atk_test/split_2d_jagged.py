# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton split of 2-D jagged tensors (NVIDIA/recsys-examples,
# examples/commons/ops/triton_ops/triton_jagged.py, see README.md), written here: forward (the
# split kernel) and backward (the concat kernel), for a jagged or dense a and b, with b's prefix
# rows first. Upstream launches one program per (row, sequence), each copying one whole row;
# here NUM_PROGRAMS programs (an Ascend launch takes at most 65535 blocks) walk tiles of BLOCK_N
# rows of one sequence, copying BLOCK_D columns at a time, a tile's rows to a and to b as row
# ranges. The kernels and their launchers are the same source as concat_2d_jagged's port (each
# ATK folder runs alone); the config per launch comes from the frozen configs below (upstream:
# one fixed launch).
"""Triton port of split_2d_jagged: a jagged tensor cut per sequence into a and b (b's first
n_prefix rows, a, b's other rows), and its backward, the concat."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch (an Ascend launch over 65535 blocks fails).
MAX_NUM_PROGRAMS = 32768
#: The widest column block (upstream's whole row); a wider row is copied in blocks.
MAX_BLOCK_D = 16384


@triton.jit
def _sequence(Offsets, z, dense_size, IS_DENSE: tl.constexpr):
    """(first row, rows) of sequence z: from the offsets, or of a dense [B, dense_size, D]."""
    if IS_DENSE:
        start = z.to(tl.int64) * dense_size
        return start, start * 0 + dense_size
    else:
        start = tl.load(Offsets + z).to(tl.int64)
        return start, tl.load(Offsets + z + 1).to(tl.int64) - start


@triton.jit
def _row_offsets(start, z, rows, stride, stride_dense_batch, IS_DENSE: tl.constexpr):
    """Element offsets of rows `rows` of sequence z: batch z of a dense tensor, or the jagged
    rows from `start`."""
    if IS_DENSE:
        return z.to(tl.int64) * stride_dense_batch + rows.to(tl.int64) * stride
    else:
        return (start + rows) * stride


@triton.jit
def _copy_rows(Src, src_rows, Dst, dst_rows, live, D, BLOCK_D: tl.constexpr):
    """Copy the `live` rows, at element offsets src_rows and dst_rows, BLOCK_D columns at a time."""
    cols = tl.arange(0, BLOCK_D)
    for start in range(0, D, BLOCK_D):
        mask = live[:, None] & (start + cols < D)[None, :]
        v = tl.load(Src + src_rows[:, None] + (start + cols)[None, :], mask=mask)
        tl.store(Dst + dst_rows[:, None] + (start + cols)[None, :], v, mask=mask)


@triton.jit
def _concat_2d_jagged_kernel(
    OffsetsA, ValuesA, OffsetsB, ValuesB, Out, dense_size, D, n_prefix, row_blocks, tiles,
    stride_ad, stride_bd, stride_dense_batch, stride_od,
    IS_DENSE_A: tl.constexpr, IS_DENSE_B: tl.constexpr, IS_REPLACE: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """Sequence z of Out: b's rows [0, n_prefix), a's rows, b's other rows; or (IS_REPLACE) a's
    rows with its last len_b replaced by b's."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    for tile in range(pid, tiles, tl.num_programs(0)):
        z = tile // row_blocks
        first = (tile % row_blocks) * BLOCK_N
        start_a, len_a = _sequence(OffsetsA, z, dense_size, IS_DENSE_A)
        start_b, len_b = _sequence(OffsetsB, z, dense_size, IS_DENSE_B)
        if IS_REPLACE:
            seq_len = len_a
            out_start = start_a
            b_first = len_a - len_b
        else:
            seq_len = len_a + len_b
            out_start = start_a + start_b
            b_first = len_a + n_prefix
        if first < seq_len:
            rows = first + offs
            live = rows < seq_len
            out_rows = (out_start + rows) * stride_od
            if first < n_prefix:
                src = _row_offsets(start_b, z, rows, stride_bd, stride_dense_batch, IS_DENSE_B)
                _copy_rows(ValuesB, src, Out, out_rows, live & (rows < n_prefix), D, BLOCK_D)
            if (first < b_first) & (first + BLOCK_N > n_prefix):
                src = _row_offsets(
                    start_a, z, rows - n_prefix, stride_ad, stride_dense_batch, IS_DENSE_A
                )
                in_a = live & (rows >= n_prefix) & (rows < b_first)
                _copy_rows(ValuesA, src, Out, out_rows, in_a, D, BLOCK_D)
            if first + BLOCK_N > b_first:
                src = _row_offsets(
                    start_b, z, rows - b_first + n_prefix, stride_bd, stride_dense_batch,
                    IS_DENSE_B,
                )  # fmt: skip
                _copy_rows(ValuesB, src, Out, out_rows, live & (rows >= b_first), D, BLOCK_D)


@triton.jit
def _split_2d_jagged_kernel(
    In, OffsetsA, OffsetsB, OutA, OutB, dense_size, D, n_prefix, row_blocks, tiles,
    stride_id, stride_ad, stride_bd, stride_dense_batch,
    IS_DENSE_A: tl.constexpr, IS_DENSE_B: tl.constexpr, IS_REPLACE: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """The inverse of _concat_2d_jagged_kernel: sequence z of In cut into a's and b's rows."""
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    for tile in range(pid, tiles, tl.num_programs(0)):
        z = tile // row_blocks
        first = (tile % row_blocks) * BLOCK_N
        start_a, len_a = _sequence(OffsetsA, z, dense_size, IS_DENSE_A)
        start_b, len_b = _sequence(OffsetsB, z, dense_size, IS_DENSE_B)
        if IS_REPLACE:
            seq_len = len_a
            in_start = start_a
            b_first = len_a - len_b
        else:
            seq_len = len_a + len_b
            in_start = start_a + start_b
            b_first = len_a + n_prefix
        if first < seq_len:
            rows = first + offs
            live = rows < seq_len
            in_rows = (in_start + rows) * stride_id
            if first < n_prefix:
                dst = _row_offsets(start_b, z, rows, stride_bd, stride_dense_batch, IS_DENSE_B)
                _copy_rows(In, in_rows, OutB, dst, live & (rows < n_prefix), D, BLOCK_D)
            if (first < b_first) & (first + BLOCK_N > n_prefix):
                dst = _row_offsets(
                    start_a, z, rows - n_prefix, stride_ad, stride_dense_batch, IS_DENSE_A
                )
                in_a = live & (rows >= n_prefix) & (rows < b_first)
                _copy_rows(In, in_rows, OutA, dst, in_a, D, BLOCK_D)
            if first + BLOCK_N > b_first:
                dst = _row_offsets(
                    start_b, z, rows - b_first + n_prefix, stride_bd, stride_dense_batch,
                    IS_DENSE_B,
                )  # fmt: skip
                _copy_rows(In, in_rows, OutB, dst, live & (rows >= b_first), D, BLOCK_D)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_n2048_d256_p0_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 2048, "D": 256, "prefix": 0},
                "config": {"BLOCK_N": 1, "BLOCK_D": 256, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "b128_n4096_d1024_p0_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 128, "max_seq_len": 4096, "D": 1024, "prefix": 0},
                "config": {"BLOCK_N": 2, "BLOCK_D": 1024, "NUM_PROGRAMS": 32768, "num_warps": 4},
            },
            {
                "case": "b256_n2048_d512_p0_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 512, "prefix": 0},
                "config": {"BLOCK_N": 1, "BLOCK_D": 512, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "b512_n1024_d256_p16_fp16",
                "dtype": "float16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "prefix": 16},
                "config": {"BLOCK_N": 1, "BLOCK_D": 256, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
        ],
        "fwd": [
            {
                "case": "b1024_n2048_d256_p0_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 2048, "D": 256, "prefix": 0},
                "config": {"BLOCK_N": 1, "BLOCK_D": 256, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "b128_n4096_d1024_p0_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 128, "max_seq_len": 4096, "D": 1024, "prefix": 0},
                "config": {"BLOCK_N": 2, "BLOCK_D": 1024, "NUM_PROGRAMS": 32768, "num_warps": 4},
            },
            {
                "case": "b256_n2048_d512_p0_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 256, "max_seq_len": 2048, "D": 512, "prefix": 0},
                "config": {"BLOCK_N": 1, "BLOCK_D": 512, "NUM_PROGRAMS": 32768, "num_warps": 2},
            },
            {
                "case": "b512_n1024_d256_p16_fp16",
                "dtype": "float16",
                "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "prefix": 16},
                "config": {"BLOCK_N": 2, "BLOCK_D": 256, "NUM_PROGRAMS": 32768, "num_warps": 4},
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


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's launch, both kernels: one row per program (grid (max_seq_len, B), here at most
    MAX_NUM_PROGRAMS programs), the whole row in one block, Triton's default 4 warps."""
    if kernel not in ("fwd", "bwd"):
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd")
    block_d = min(triton.next_power_of_2(shape["D"]), MAX_BLOCK_D)
    return {"BLOCK_N": 1, "BLOCK_D": block_d, "NUM_PROGRAMS": MAX_NUM_PROGRAMS, "num_warps": 4}


def _launch(kernel, config, shape, tensor):
    """(constexpr blocks, launch options, tiles, grid) of the given or picked config."""
    if config is None:
        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))
        config = _pick_config(kernel, shape, dtype, tensor.device, default_config(kernel, shape))
    blocks, options = _split_config(config, tensor.device)
    row_blocks = triton.cdiv(shape["max_seq_len"], blocks["BLOCK_N"])
    tiles = shape["B"] * row_blocks
    programs = max(1, min(config.get("NUM_PROGRAMS", MAX_NUM_PROGRAMS), tiles))
    return blocks, options, row_blocks, tiles, (programs,)


def _contiguous(x):
    """Rows of unit column stride (upstream's switch_to_contiguous_if_needed)."""
    return x if x.stride(-1) == 1 else x.contiguous()


def _lengths(offsets, batch, dense_size):
    if offsets is None:
        return [dense_size] * batch
    host = offsets.tolist()
    return [b - a for a, b in zip(host, host[1:], strict=False)]


def _check_pair(values_a, values_b, offsets_a, offsets_b, joined_rows, max_seq_len, n_prefix,
                is_replace):  # fmt: skip
    """Raise ValueError (one line) unless a and b (and their concatenation's rows) are a pair
    the kernels take: offsets of their rows, one batch, one width and dtype, every b sequence at
    least n_prefix rows where a's has any, every joined sequence at most max_seq_len rows."""
    if offsets_a is None and offsets_b is None:
        raise ValueError("a and b cannot both be dense: give offsets_a or offsets_b")
    for name, values, offsets in (("a", values_a, offsets_a), ("b", values_b, offsets_b)):
        if values.dim() != (3 if offsets is None else 2):
            raise ValueError(f"{name} must be [rows, D] with offsets, else [B, n, D]")
        if offsets is not None:
            _check_offsets(offsets, values.size(0))
    batch = (offsets_a if offsets_a is not None else offsets_b).numel() - 1
    dense = values_a if offsets_a is None else values_b if offsets_b is None else None
    if dense is not None and dense.size(0) != batch:
        raise ValueError(f"the dense tensor has {dense.size(0)} sequences, the offsets {batch}")
    if offsets_a is not None and offsets_b is not None and offsets_b.numel() - 1 != batch:
        raise ValueError(f"offsets_a has {batch} sequences, offsets_b {offsets_b.numel() - 1}")
    if values_a.size(-1) != values_b.size(-1) or values_a.dtype != values_b.dtype:
        raise ValueError("a and b must share D and dtype")
    if n_prefix < 0 or (is_replace and (n_prefix or offsets_a is None)):
        raise ValueError("n_prefix must be >= 0, and 0 with is_replace (whose a is jagged)")
    dense_size = 0 if dense is None else dense.size(1)
    len_a = _lengths(offsets_a, batch, dense_size)
    len_b = _lengths(offsets_b, batch, dense_size)
    if any(a and b < n_prefix for a, b in zip(len_a, len_b, strict=True)):
        raise ValueError(f"a sequence of b has fewer than n_prefix={n_prefix} rows before a's")
    joined = len_a if is_replace else [a + b for a, b in zip(len_a, len_b, strict=True)]
    if max(joined, default=0) > max_seq_len:
        raise ValueError(
            f"a joined sequence has {max(joined)} rows, over max_seq_len={max_seq_len}"
        )
    if joined_rows is not None and joined_rows != sum(joined):
        raise ValueError(f"the joined tensor has {joined_rows} rows; a and b have {sum(joined)}")


def concat_2d_jagged_fwd(max_seq_len, values_a, values_b, offsets_a=None, offsets_b=None,
                         is_replace=False, n_prefix_from_right=0, *, config=None, check=False):  # fmt: skip
    """a and b joined per sequence (upstream's _Concat2DJaggedFunction.forward): b's first
    n_prefix_from_right rows, a's rows, b's other rows; with is_replace a's rows, its last ones
    replaced by b's. A dense a or b ([B, n, D], its offsets None) has n rows per sequence."""
    values_a, values_b = _contiguous(values_a), _contiguous(values_b)
    if _checked(check):
        _check_pair(values_a, values_b, offsets_a, offsets_b, None, max_seq_len,
                    n_prefix_from_right, is_replace)  # fmt: skip
    dense = values_a if offsets_a is None else values_b if offsets_b is None else None
    batch = dense.size(0) if dense is not None else offsets_a.numel() - 1
    dense_size, stride_dense = (dense.size(1), dense.stride(0)) if dense is not None else (0, 0)
    d = values_a.size(-1)
    rows_a, rows_b = values_a.shape[:-1].numel(), values_b.shape[:-1].numel()
    out = values_a.new_empty(rows_a if is_replace else rows_a + rows_b, d)
    shape = {"B": batch, "max_seq_len": max_seq_len, "D": d, "prefix": n_prefix_from_right}
    blocks, options, row_blocks, tiles, grid = _launch(_KERNELS["concat"], config, shape, out)
    if out.numel() == 0:
        return out
    _concat_2d_jagged_kernel[grid](
        offsets_a if offsets_a is not None else offsets_b, values_a,
        offsets_b if offsets_b is not None else offsets_a, values_b, out, dense_size, d,
        n_prefix_from_right, row_blocks, tiles, values_a.stride(-2), values_b.stride(-2),
        stride_dense, out.stride(0), IS_DENSE_A=offsets_a is None, IS_DENSE_B=offsets_b is None,
        IS_REPLACE=is_replace, **blocks, **options,
    )  # fmt: skip
    return out


def split_2d_jagged_fwd(values, max_seq_len, offsets_a=None, offsets_b=None, dense_size=0,
                        n_prefix_to_right=0, seq_len_a=None, seq_len_b=None, is_replace=False,
                        *, config=None, check=False):  # fmt: skip
    """(a, b) cut from their concatenation `values` (upstream's _Split2DJaggedFunction.forward;
    with is_replace, the backward of a replacing concat: the replaced rows of a, and rows of b
    nothing was taken from, come out zero). A dense a or b (its offsets None) is [B, dense_size,
    D]. seq_len_a and seq_len_b, a's and b's rows, are read from the offsets where not given."""
    values = _contiguous(values)
    rows, d = values.shape
    batch = (offsets_a if offsets_a is not None else offsets_b).numel() - 1
    if offsets_a is None:
        seq_len_a, seq_len_b = dense_size * batch, rows - dense_size * batch
    elif offsets_b is None:
        seq_len_a, seq_len_b = rows - dense_size * batch, dense_size * batch
    else:
        seq_len_a = int(offsets_a[-1]) if seq_len_a is None else int(seq_len_a)
        seq_len_b = int(offsets_b[-1]) if seq_len_b is None else int(seq_len_b)
    fill = torch.zeros if is_replace else torch.empty
    out_a = fill(*((batch, dense_size) if offsets_a is None else (seq_len_a,)), d,
                 dtype=values.dtype, device=values.device)  # fmt: skip
    out_b = fill(*((batch, dense_size) if offsets_b is None else (seq_len_b,)), d,
                 dtype=values.dtype, device=values.device)  # fmt: skip
    if _checked(check):
        _check_pair(out_a, out_b, offsets_a, offsets_b, rows, max_seq_len, n_prefix_to_right,
                    is_replace)  # fmt: skip
    dense = out_a if offsets_a is None else out_b if offsets_b is None else None
    stride_dense = dense.stride(0) if dense is not None else 0
    shape = {"B": batch, "max_seq_len": max_seq_len, "D": d, "prefix": n_prefix_to_right}
    blocks, options, row_blocks, tiles, grid = _launch(_KERNELS["split"], config, shape, values)
    if values.numel() == 0:
        return out_a, out_b
    _split_2d_jagged_kernel[grid](
        values, offsets_a if offsets_a is not None else offsets_b,
        offsets_b if offsets_b is not None else offsets_a, out_a, out_b, dense_size, d,
        n_prefix_to_right, row_blocks, tiles, values.stride(0), out_a.stride(-2),
        out_b.stride(-2), stride_dense, IS_DENSE_A=offsets_a is None,
        IS_DENSE_B=offsets_b is None, IS_REPLACE=is_replace, **blocks, **options,
    )  # fmt: skip
    return out_a, out_b


#: Which of this op's kernels (FROZEN_CONFIGS' names) each launcher runs.
_KERNELS = {"split": "fwd", "concat": "bwd"}


class Split2DJaggedFunction(torch.autograd.Function):
    """Autograd of the port (upstream's _Split2DJaggedFunction): split forward, concat backward."""

    @staticmethod
    def forward(ctx, values, max_seq_len, offsets_a=None, offsets_b=None, dense_size=0,
                n_prefix_to_right=0, seq_len_a=None, seq_len_b=None):  # fmt: skip
        a, b = split_2d_jagged_fwd(values, max_seq_len, offsets_a, offsets_b, dense_size,
                                   n_prefix_to_right, seq_len_a, seq_len_b)  # fmt: skip
        ctx.save_for_backward(offsets_a, offsets_b)
        ctx.max_seq_len, ctx.prefix = max_seq_len, n_prefix_to_right
        return a, b

    @staticmethod
    def backward(ctx, d_a, d_b):
        offsets_a, offsets_b = ctx.saved_tensors
        d_values = concat_2d_jagged_fwd(
            ctx.max_seq_len, d_a, d_b, offsets_a, offsets_b, False, ctx.prefix
        )
        return d_values, None, None, None, None, None, None, None


def triton_split_2D_jagged(values, max_seq_len, offsets_a=None, offsets_b=None, dense_size=0,
                           n_prefix_to_right=0, seq_len_a=None, seq_len_b=None):  # fmt: skip
    """Upstream's entry point: (a, b) cut from `values` per sequence, differentiable."""
    return Split2DJaggedFunction.apply(
        values, max_seq_len, offsets_a, offsets_b, dense_size, n_prefix_to_right, seq_len_a,
        seq_len_b,
    )  # fmt: skip
