# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton SiLU (NVIDIA/recsys-examples,
# examples/hstu/ops/triton_ops/triton_silu.py, see README.md), written here: y = x * sigmoid(x)
# over the flattened input, one block of x_block_size elements per program (upstream's
# x_block_size), and its backward dx = dy * sigmoid(x) * (1 + x (1 - sigmoid(x))). Differences from
# upstream: on an NPU at most 32768 programs, walking the blocks beyond that (an Ascend launch takes
# at most 65535 blocks), SiLU as x / (1 + exp(-x)) (libdevice's fast_dividef is CUDA's), any
# strided input (made contiguous; upstream's view(-1) refuses one), and the config passed per
# launch from the frozen configs below (upstream: Triton's autotuner).
"""Triton port of SiLU: y = silu(x) and dx = silu'(x) * dy, elementwise."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch per device type; below it, one block per program (upstream's).
MAX_PROGRAMS = {"npu": 32768}


@triton.jit
def _silu_fwd_kernel(
    Y, X, size, num_programs, PERSISTENT: tl.constexpr, x_block_size: tl.constexpr,
):  # fmt: skip
    """y = x / (1 + exp(-x)) in fp32 per block; with PERSISTENT (more blocks than programs) the
    blocks pid, pid + num_programs, ..."""
    if PERSISTENT:
        for block in range(tl.program_id(0), tl.cdiv(size, x_block_size), num_programs):
            _silu_fwd_block(block, Y, X, size, x_block_size)
    else:
        _silu_fwd_block(tl.program_id(0), Y, X, size, x_block_size)


@triton.jit
def _silu_fwd_block(block, Y, X, size, x_block_size: tl.constexpr):
    start = tl.cast(block, tl.int64) * x_block_size
    cols = tl.arange(0, x_block_size)
    mask = cols < size - start
    x = tl.load(X + start + cols, mask=mask, other=0.0).to(tl.float32)
    y = x / (1.0 + tl.exp(-x))
    tl.store(Y + start + cols, y.to(Y.dtype.element_ty), mask=mask)


@triton.jit
def _silu_bwd_kernel(
    DX, DY, X, size, num_programs, PERSISTENT: tl.constexpr, x_block_size: tl.constexpr,
):  # fmt: skip
    """dx = dy * s * (1 + x (1 - s)), s = sigmoid(x), in fp32 per block; blocks as the forward's."""
    if PERSISTENT:
        for block in range(tl.program_id(0), tl.cdiv(size, x_block_size), num_programs):
            _silu_bwd_block(block, DX, DY, X, size, x_block_size)
    else:
        _silu_bwd_block(tl.program_id(0), DX, DY, X, size, x_block_size)


@triton.jit
def _silu_bwd_block(block, DX, DY, X, size, x_block_size: tl.constexpr):
    start = tl.cast(block, tl.int64) * x_block_size
    cols = tl.arange(0, x_block_size)
    mask = cols < size - start
    dy = tl.load(DY + start + cols, mask=mask, other=0.0).to(tl.float32)
    x = tl.load(X + start + cols, mask=mask, other=0.0).to(tl.float32)
    s = tl.sigmoid(x)
    dx = dy * (s + x * s * (1.0 - s))
    tl.store(DX + start + cols, dx.to(DX.dtype.element_ty), mask=mask)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {}

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
_CONSTEXPRS = ()
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {}
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
    """Upstream's first autotune config (silu_configs): its autotuner's pick among its sixteen is
    a timing on the GPU, not a rule."""
    if kernel not in ("fwd", "bwd"):
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd")
    return {"x_block_size": 256, "num_warps": 2}


_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _check_inputs(x, dy=None):
    if x.dtype not in _FLOATS:
        raise ValueError(f"input must be float32, float16 or bfloat16, got {x.dtype}")
    if dy is not None and (dy.shape != x.shape or dy.dtype != x.dtype):
        raise ValueError(
            f"grad_output must match input: got {tuple(dy.shape)} {dy.dtype}, "
            f"input {tuple(x.shape)} {x.dtype}"
        )


def _launch(kernel, fn, out, tensors, config):
    """Run `fn` over the flattened tensors (out first) at the given or picked config."""
    size = out.numel()
    if size == 0:
        return
    width = out.shape[-1] if out.dim() else 1
    shape = {"N": size // width, "D": width}  # the case's [N, D]: rows of the last dimension
    if config is None:
        dtype = _DTYPE_NAMES.get(out.dtype, str(out.dtype))
        config = _pick_config(kernel, shape, dtype, out.device, default_config(kernel, shape))
    _, options = _split_config(config, out.device)
    block = config["x_block_size"]  # upstream's name (its autotune list's), no BLOCK_* constexpr
    count = triton.cdiv(size, block)
    programs = min(count, MAX_PROGRAMS.get(out.device.type, count))
    fn[(programs,)](
        out, *tensors, size, programs, PERSISTENT=programs < count, x_block_size=block, **options
    )


def silu_fwd(input, *, config=None, check=False):
    """silu(input) in its dtype and shape (upstream's triton_silu_fwd)."""
    if _checked(check):
        _check_inputs(input)
    x = input.contiguous()
    y = torch.empty_like(x)
    _launch("fwd", _silu_fwd_kernel, y, (x,), config)
    return y


def silu_bwd(grad_output, input, *, config=None, check=False):
    """grad_output * silu'(input) in input's dtype and shape (upstream's triton_silu_bwd)."""
    if _checked(check):
        _check_inputs(input, grad_output)
    x, dy = input.contiguous(), grad_output.contiguous()
    dx = torch.empty_like(x)
    _launch("bwd", _silu_bwd_kernel, dx, (dy, x), config)
    return dx


class SiluFunction(torch.autograd.Function):
    """Autograd of the port (upstream's TritonSilu)."""

    @staticmethod
    def forward(ctx, input):
        ctx.save_for_backward(input)
        return silu_fwd(input)

    @staticmethod
    def backward(ctx, grad_output):
        return silu_bwd(grad_output, ctx.saved_tensors[0])


def silu(input):
    """Upstream's triton_silu(input): silu of the input, differentiable."""
    return SiluFunction.apply(input.contiguous())
