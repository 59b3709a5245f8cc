# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's SLL jagged2_to_padded_dense and its backward padded_dense_to_jagged2
# (pytorch/FBGEMM, see README.md), written here. Same tiling as upstream (grid: row blocks x
# column blocks x sequences); the forward writes the padding itself (upstream fills the whole
# output first, an extra pass), the backward writes the zeros of each segment's tail (upstream
# leaves them undefined).
"""Triton port of jagged2_to_padded_dense: jagged2 [sum L_b^2] <-> padded dense [B, N, N]."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged2_to_padded_dense_kernel(
    values_ptr, lengths_ptr, offsets_ptr, out_ptr, max_len, padding_value,
    stride_ob, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """dense[b, m, n] = values[begin + m * Lt + n] for m, n < Lt = min(L_b, max_len), else padding."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    begin = tl.load(offsets_ptr + pid_b)
    lt = tl.minimum(tl.load(lengths_ptr + pid_b), max_len).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    inside = (offs_m[:, None] < lt) & (offs_n[None, :] < lt)
    x = tl.load(
        values_ptr + begin + offs_m[:, None] * lt + offs_n[None, :],
        mask=inside,
        other=padding_value,
    )
    tl.store(
        out_ptr + pid_b * stride_ob + offs_m[:, None] * stride_om + offs_n[None, :] * stride_on,
        x,
        mask=(offs_m[:, None] < max_len) & (offs_n[None, :] < max_len),
    )


@triton.jit
def _padded_dense_to_jagged2_kernel(
    dense_ptr, lengths_ptr, offsets_ptr, out_ptr, max_len,
    stride_db, stride_dm, stride_dn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """out[begin + m * Lt + n] = dense[b, m, n] for m, n < Lt; the segment past Lt^2 is zero."""
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    pid_b = tl.program_id(2).to(tl.int64)
    begin = tl.load(offsets_ptr + pid_b)
    end = tl.load(offsets_ptr + pid_b + 1)
    lt = tl.minimum(tl.load(lengths_ptr + pid_b), max_len).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    inside = (offs_m[:, None] < lt) & (offs_n[None, :] < lt)
    x = tl.load(
        dense_ptr + pid_b * stride_db + offs_m[:, None] * stride_dm + offs_n[None, :] * stride_dn,
        mask=inside,
        other=0.0,
    )
    tl.store(out_ptr + begin + offs_m[:, None] * lt + offs_n[None, :], x, mask=inside)
    # Sequences longer than max_len: their segment past Lt^2 gets zeros, spread over the
    # sequence's programs in tiles of BLOCK_M * BLOCK_N.
    program = pid_m * tl.num_programs(1) + pid_n
    step = tl.num_programs(0) * tl.num_programs(1) * BLOCK_M * BLOCK_N
    tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    zeros = tl.zeros([BLOCK_M, BLOCK_N], dtype=out_ptr.dtype.element_ty)
    for start in range(begin + lt * lt + program * BLOCK_M * BLOCK_N, end, step):
        offs = start + tile
        tl.store(out_ptr + offs, zeros, mask=offs < end)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "bwd": [
            {
                "case": "b1024_n256_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 256},
                "config": {"BLOCK_M": 8, "BLOCK_N": 128, "num_warps": 1},
            },
            {
                "case": "b128_n1024_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 128, "max_seq_len": 1024},
                "config": {"BLOCK_M": 8, "BLOCK_N": 256, "num_warps": 2},
            },
            {
                "case": "b2048_n128_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 128},
                "config": {"BLOCK_M": 8, "BLOCK_N": 128, "num_warps": 2},
            },
            {
                "case": "b512_n512_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 512},
                "config": {"BLOCK_M": 4, "BLOCK_N": 256, "num_warps": 1},
            },
        ],
        "fwd": [
            {
                "case": "b1024_n256_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 256},
                "config": {"BLOCK_M": 8, "BLOCK_N": 256, "num_warps": 8},
            },
            {
                "case": "b128_n1024_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 128, "max_seq_len": 1024},
                "config": {"BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 4},
            },
            {
                "case": "b2048_n128_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 128},
                "config": {"BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 2},
            },
            {
                "case": "b512_n512_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 512},
                "config": {"BLOCK_M": 16, "BLOCK_N": 128, "num_warps": 4},
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
_CONSTEXPRS = ("BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {
    "fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
    "bwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"},
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
    """Upstream's launch (both directions): BLOCK_M = BLOCK_N = 32 and Triton's num_warps=4."""
    return {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4}


def jagged2_lengths(offsets):
    """Upstream's lengths: sqrt of the segment sizes, truncated to int32 (no host sync)."""
    return torch.sqrt(offsets[1:] - offsets[0:-1:1]).to(torch.int32)


def _check_lengths(lengths, offsets):
    if lengths is not None and not torch.equal(lengths, jagged2_lengths(offsets)):
        raise ValueError("lengths must be jagged2_lengths(offsets): floor(sqrt(segment sizes))")


def _check_jagged2(offsets, total, max_len):
    if max_len < 0:
        raise ValueError(f"max_length must be non-negative, got {max_len}")
    _check_offsets(offsets, total)


def jagged2_to_padded_dense_fwd(
    values, offsets, max_length, padding_value=0.0, *, lengths=None, config=None, check=False
):
    """values [sum L_b^2] -> [B, max_length, max_length], padded with `padding_value`.
    `lengths` (= jagged2_lengths(offsets)) spares computing them when the caller has them."""
    max_len = int(max_length)
    if _checked(check):
        if values.dim() != 1:
            raise ValueError(f"values must be a 1-D jagged2 tensor, got {tuple(values.shape)}")
        _check_jagged2(offsets, values.numel(), max_len)
        _check_lengths(lengths, offsets)
    batch = offsets.numel() - 1
    shape = {"B": batch, "max_seq_len": max_len}
    blocks, options = _configure("fwd", config, shape, values)
    out = torch.empty(batch, max_len, max_len, dtype=values.dtype, device=values.device)
    if out.numel() == 0:
        return out
    grid = (triton.cdiv(max_len, blocks["BLOCK_M"]), triton.cdiv(max_len, blocks["BLOCK_N"]), batch)
    _jagged2_to_padded_dense_kernel[grid](
        values, jagged2_lengths(offsets) if lengths is None else lengths, offsets, out, max_len,
        padding_value,
        out.stride(0), out.stride(1), out.stride(2), **blocks, **options,
    )  # fmt: skip
    return out


def padded_dense_to_jagged2_fwd(
    dense, offsets, max_length, total_length=None, *, lengths=None, config=None, check=False
):
    """[B, max_length, max_length] -> jagged2 [offsets[-1]] (the backward of the forward).
    `total_length` (= offsets[-1]) spares a device-to-host read when the caller knows it, and
    `lengths` (= jagged2_lengths(offsets), saved by the forward as upstream's) three small
    kernels before this one.
    """
    max_len = int(max_length)
    batch = offsets.numel() - 1
    if total_length is None:
        total_length = int(offsets[-1])
    if _checked(check):
        if (
            dense.dim() != 3
            or dense.size(0) != batch
            or dense.size(1) < max_len
            or dense.size(2) < max_len
        ):
            raise ValueError(
                f"dense must be [B, max_length, max_length] = [{batch}, {max_len}, {max_len}], got {tuple(dense.shape)}"
            )
        _check_jagged2(offsets, int(offsets[-1]) if offsets.numel() else 0, max_len)
        _check_lengths(lengths, offsets)
    out = torch.empty(total_length, dtype=dense.dtype, device=dense.device)
    shape = {"B": batch, "max_seq_len": max_len}
    blocks, options = _configure("bwd", config, shape, dense)
    if out.numel() == 0:
        return out
    grid = (
        max(1, triton.cdiv(max_len, blocks["BLOCK_M"])),
        max(1, triton.cdiv(max_len, blocks["BLOCK_N"])),
        batch,
    )
    _padded_dense_to_jagged2_kernel[grid](
        dense, jagged2_lengths(offsets) if lengths is None else lengths, offsets, out, max_len,
        dense.stride(0), dense.stride(1), dense.stride(2), **blocks, **options,
    )  # fmt: skip
    return out


class Jagged2ToPaddedDense(torch.autograd.Function):
    @staticmethod
    def forward(ctx, values, offsets, max_length, padding_value):
        lengths = jagged2_lengths(offsets)
        ctx.max_length = max_length
        ctx.save_for_backward(offsets, lengths)  # as upstream: the backward reuses the lengths
        return jagged2_to_padded_dense_fwd(
            values, offsets, max_length, padding_value, lengths=lengths
        )

    @staticmethod
    def backward(ctx, grad_output):
        offsets, lengths = ctx.saved_tensors
        dvalues = padded_dense_to_jagged2_fwd(grad_output, offsets, ctx.max_length, lengths=lengths)
        return dvalues, None, None, None


def jagged2_to_padded_dense(values, offsets, max_length, padding_value=0.0):
    """Upstream's call: values [sum N_i^2], offsets [B + 1] -> [B, max_length, max_length]."""
    return Jagged2ToPaddedDense.apply(
        values.contiguous(), offsets.contiguous(), max_length, padding_value
    )
