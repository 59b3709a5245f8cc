# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of FBGEMM's SLL jagged_dense_elementwise_mul_jagged_out (pytorch/FBGEMM, see
# README.md), written here. Same grid as upstream (row blocks x sequences, a loop over column
# blocks); the product runs in fp32, and the kernel itself zeroes the part of each sequence's
# segment past Lt^2 (upstream fills the whole output with zeros first, an extra pass).
"""Triton port of jagged_dense_elementwise_mul_jagged_out: jagged2 x * dense [N, N] -> jagged2."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl


@triton.jit
def _jagged_dense_mul_kernel(
    x_ptr, y_ptr, out_ptr, lengths_ptr, offsets_ptr, max_len, stride_ym, stride_yn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):  # fmt: skip
    """out[begin + r * Lt + c] = x[begin + r * Lt + c] * y[r, c] for r, c < Lt = min(L_b, max_len)."""
    pid_m = tl.program_id(0)
    pid_b = tl.program_id(1)
    begin = tl.load(offsets_ptr + pid_b)
    end = tl.load(offsets_ptr + pid_b + 1)
    lt = tl.minimum(tl.load(lengths_ptr + pid_b), max_len).to(tl.int64)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    mask_m = offs_m < lt
    for start_n in range(0, lt, BLOCK_N):
        offs_n = start_n + tl.arange(0, BLOCK_N)
        mask = mask_m[:, None] & (offs_n[None, :] < lt)
        jagged = begin + offs_m[:, None] * lt + offs_n[None, :]
        x = tl.load(x_ptr + jagged, mask=mask, other=0.0)
        y = tl.load(
            y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn, mask=mask, other=0.0
        )
        out = x.to(tl.float32) * y.to(tl.float32)
        tl.store(out_ptr + jagged, out.to(out_ptr.dtype.element_ty), mask=mask)
    # The segment's elements past Lt^2 (sequences longer than max_len) are zero, spread over the
    # sequence's programs in chunks of BLOCK_M * BLOCK_N.
    step = tl.num_programs(0) * BLOCK_M * BLOCK_N
    tile = tl.arange(0, BLOCK_M)[:, None] * BLOCK_N + tl.arange(0, BLOCK_N)[None, :]
    zeros = tl.zeros([BLOCK_M, BLOCK_N], dtype=out_ptr.dtype.element_ty)
    for start in range(begin + lt * lt + pid_m * BLOCK_M * BLOCK_N, end, step):
        offs = start + tile
        tl.store(out_ptr + offs, zeros, mask=offs < end)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "fwd": [
            {
                "case": "b1024_n256_fp32",
                "dtype": "float32",
                "shape": {"B": 1024, "max_seq_len": 256},
                "config": {"BLOCK_M": 4, "BLOCK_N": 64, "num_warps": 1},
            },
            {
                "case": "b128_n1024_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 128, "max_seq_len": 1024},
                "config": {"BLOCK_M": 4, "BLOCK_N": 64, "num_warps": 2},
            },
            {
                "case": "b2048_n128_fp16",
                "dtype": "float16",
                "shape": {"B": 2048, "max_seq_len": 128},
                "config": {"BLOCK_M": 16, "BLOCK_N": 16, "num_warps": 4},
            },
            {
                "case": "b512_n512_bf16",
                "dtype": "bfloat16",
                "shape": {"B": 512, "max_seq_len": 512},
                "config": {"BLOCK_M": 4, "BLOCK_N": 64, "num_warps": 2},
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
_TILE_KEYS = {"fwd": {"BLOCK_M": "max_seq_len", "BLOCK_N": "max_seq_len"}}
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
    """Upstream's launch: BLOCK_M = BLOCK_N = 32 and Triton's num_warps=4."""
    return {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4}


def _check_inputs(x, y, seq_lengths, offsets, max_len):
    if x.dim() != 1:
        raise ValueError(f"x must be a 1-D jagged2 tensor [sum_b L_b^2], got {tuple(x.shape)}")
    if y.dim() != 2 or y.size(0) < max_len or y.size(1) < max_len:
        raise ValueError(
            f"y must be [max_seq_len, max_seq_len] = [{max_len}, {max_len}], got {tuple(y.shape)}"
        )
    if x.dtype != y.dtype:
        raise ValueError(f"x and y must have one dtype, got {x.dtype} and {y.dtype}")
    if max_len < 0:
        raise ValueError(f"max_seq_len must be non-negative, got {max_len}")
    _check_offsets(offsets, x.numel())
    if seq_lengths.dim() != 1 or seq_lengths.numel() != offsets.numel() - 1:
        raise ValueError(
            f"seq_lengths must have B = {offsets.numel() - 1} entries, got {tuple(seq_lengths.shape)}"
        )
    bounds, lengths = offsets.tolist(), seq_lengths.tolist()
    for b, length in enumerate(lengths):
        lt = min(length, max_len)
        if length < 0 or bounds[b + 1] - bounds[b] < lt * lt:
            raise ValueError(
                f"sequence {b}: length {length} needs {lt * lt} elements (min(L, max_seq_len)^2), "
                f"its offsets give {bounds[b + 1] - bounds[b]}"
            )


def jagged_dense_elementwise_mul_jagged_out_fwd(
    x, y, seq_lengths, offsets, max_seq_len, *, config=None, check=False
):
    """Upstream's triton_jagged_dense_elementwise_mul_jagged_out: x [sum L_b^2] * y [N, N]."""
    max_len = int(max_seq_len)
    if _checked(check):
        _check_inputs(x, y, seq_lengths, offsets, max_len)
    batch = seq_lengths.numel()
    shape = {"B": batch, "max_seq_len": max_len}
    blocks, options = _configure("fwd", config, shape, x)
    out = torch.empty_like(x)
    if out.numel() == 0 or batch == 0:
        return out
    grid = (max(1, triton.cdiv(max_len, blocks["BLOCK_M"])), batch)
    _jagged_dense_mul_kernel[grid](
        x, y, out, seq_lengths, offsets, max_len, y.stride(0), y.stride(1), **blocks, **options
    )
    return out


class JaggedDenseElementwiseMul(torch.autograd.Function):
    """z = x * y with x, z jagged2 [sum_b L_b^2] and y dense; y gets no gradient (as upstream)."""

    @staticmethod
    def forward(ctx, x, y, x_seq_lengths, x_offsets, max_seq_len):
        ctx.max_seq_len = max_seq_len
        ctx.save_for_backward(y, x_seq_lengths, x_offsets)
        return jagged_dense_elementwise_mul_jagged_out_fwd(
            x, y, x_seq_lengths, x_offsets, max_seq_len
        )

    @staticmethod
    def backward(ctx, grad_output):
        y, lengths, offsets = ctx.saved_tensors
        grad_x = jagged_dense_elementwise_mul_jagged_out_fwd(
            grad_output.contiguous(), y, lengths, offsets, ctx.max_seq_len
        )
        return grad_x, None, None, None, None


def jagged_dense_elementwise_mul_jagged_out(x, y, x_seq_lengths, x_offsets, max_seq_len):
    """Upstream's call."""
    return JaggedDenseElementwiseMul.apply(x, y, x_seq_lengths, x_offsets, max_seq_len)
