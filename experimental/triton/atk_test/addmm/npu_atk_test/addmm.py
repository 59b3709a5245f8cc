# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton addmm with optional SiLU (NVIDIA/recsys-examples,
# examples/hstu/ops/triton_ops/triton_addmm.py, see README.md), written here: z = x @ w + bias
# (bias [T] broadcast over the rows, or [N, T]) and y = silu(z), one output tile per program in
# upstream's GROUP_M order. Differences from upstream: a 1-D grid, one tile per program up to
# 32768 tiles, beyond that 32768 programs walking the tiles (an Ascend launch takes at most 65535
# blocks), SiLU as z / (1 + exp(-z)) (libdevice's fast_dividef is CUDA's), tl.dot's precision
# "hf32" on an NPU where TF32 is allowed, and the config passed per launch from the frozen configs
# below (upstream: Triton's autotuner).
# The backward is torch, as upstream's.
"""Triton port of addmm: z = x [N, D] @ w [D, T] + bias, y = silu(z); its backward in torch."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch; below it, one output tile per program (upstream's grid).
MAX_PROGRAMS = 32768


@triton.jit
def _addmm_fwd_kernel(
    X, W, Bias, Z, Y, M, N, K, num_programs,
    stride_xm, stride_xk, stride_wk, stride_wn, stride_bm, stride_bn, stride_zm, stride_zn,
    PRECISION: tl.constexpr, BROADCAST_BIAS: tl.constexpr, SILU: tl.constexpr,
    KEEP_Z: tl.constexpr, PERSISTENT: tl.constexpr, BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    """z = x @ w + bias per [BLOCK_M, BLOCK_N] tile, fp32 accumulation; Z and Y share strides.
    One tile per program, or with PERSISTENT (more tiles than programs) the tiles pid,
    pid + num_programs, ... (a loop over the tiles cost 9-37% in jagged_dense_bmm_broadcast_add's
    kernel on the H200, docs/benchmarks.md)."""
    if PERSISTENT:
        tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
        for tile in range(tl.program_id(0), tiles, num_programs):
            _addmm_tile(
                tile, X, W, Bias, Z, Y, M, N, K, stride_xm, stride_xk, stride_wk, stride_wn,
                stride_bm, stride_bn, stride_zm, stride_zn, PRECISION, BROADCAST_BIAS, SILU,
                KEEP_Z, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
            )  # fmt: skip
    else:
        _addmm_tile(
            tl.program_id(0), X, W, Bias, Z, Y, M, N, K, stride_xm, stride_xk, stride_wk,
            stride_wn, stride_bm, stride_bn, stride_zm, stride_zn, PRECISION, BROADCAST_BIAS,
            SILU, KEEP_Z, BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M,
        )  # fmt: skip


@triton.jit
def _addmm_tile(
    tile, X, W, Bias, Z, Y, M, N, K,
    stride_xm, stride_xk, stride_wk, stride_wn, stride_bm, stride_bn, stride_zm, stride_zn,
    PRECISION: tl.constexpr, BROADCAST_BIAS: tl.constexpr, SILU: tl.constexpr,
    KEEP_Z: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    GROUP_M: tl.constexpr,
):  # fmt: skip
    """One output tile; GROUP_M row blocks walk the column blocks together (their w columns stay
    in cache). The tile's int64 first row moves the base pointers, its offsets stay int32
    (upstream's arithmetic: int64 offsets per element cost 4-19% in
    jagged_dense_bmm_broadcast_add's kernel on the H200, docs/benchmarks.md)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    per_group = GROUP_M * tl.cdiv(N, BLOCK_N)
    first_m = (tile // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + tile % group_rows
    tile_n = (tile % per_group) // group_rows
    first_row = tile_m.to(tl.int64) * BLOCK_M
    offs_m = tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    mask_m = offs_m < M - tile_m * BLOCK_M
    mask_n = cols < N
    x_tile = (X + first_row * stride_xm) + offs_m[:, None] * stride_xm + offs_k[None, :] * stride_xk
    w_tile = W + offs_k[:, None] * stride_wk + cols[None, :] * stride_wn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        mask_k = offs_k < K - start
        a = tl.load(x_tile, mask=mask_m[:, None] & mask_k[None, :], other=0.0)
        b = tl.load(w_tile, mask=mask_k[:, None] & mask_n[None, :], other=0.0)
        acc += tl.dot(a, b, input_precision=PRECISION)
        x_tile += BLOCK_K * stride_xk
        w_tile += BLOCK_K * stride_wk
    mask = mask_m[:, None] & mask_n[None, :]
    if BROADCAST_BIAS:
        bias = tl.load(Bias + cols * stride_bn, mask=mask_n, other=0.0)
        z = acc + bias.to(tl.float32)[None, :]
    else:
        bias_rows = Bias + first_row * stride_bm
        bias = tl.load(
            bias_rows + offs_m[:, None] * stride_bm + cols[None, :] * stride_bn,
            mask=mask,
            other=0.0,
        )
        z = acc + bias.to(tl.float32)
    out = offs_m[:, None] * stride_zm + cols[None, :] * stride_zn
    if KEEP_Z:
        tl.store((Z + first_row * stride_zm) + out, z.to(Z.dtype.element_ty), mask=mask)
    if SILU:
        # SiLU of z as stored (rounded to the output dtype), what the backward reads.
        zq = z.to(Y.dtype.element_ty).to(tl.float32)
        y = (zq / (1.0 + tl.exp(-zq))).to(Y.dtype.element_ty)
        tl.store((Y + first_row * stride_zm) + out, y, mask=mask)


# >>> autotune generated block: rewritten by `autotune freeze`, do not edit by hand >>>
# Launch configs frozen per soc, kernel and case, the code that picks one at run time, and the
# launcher helpers this port shares with others (autotuner.atk.generated_block.PORT_HELPERS).
FROZEN_CONFIGS = {
    "H200": {
        "fwd": [
            {
                "case": "n1048576_d256_t256_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 1048576, "D": 256, "T": 256},
                "config": {
                    "BLOCK_M": 128,
                    "BLOCK_N": 64,
                    "BLOCK_K": 32,
                    "GROUP_M": 8,
                    "num_warps": 4,
                    "num_stages": 4,
                },
            },
            {
                "case": "n131072_d1024_t256_fp32",
                "dtype": "float32",
                "shape": {"N": 131072, "D": 1024, "T": 256},
                "config": {
                    "BLOCK_M": 32,
                    "BLOCK_N": 64,
                    "BLOCK_K": 16,
                    "GROUP_M": 8,
                    "num_warps": 2,
                    "num_stages": 4,
                },
            },
            {
                "case": "n131072_d512_t512_bf16",
                "dtype": "bfloat16",
                "shape": {"N": 131072, "D": 512, "T": 512},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "GROUP_M": 8,
                    "num_warps": 4,
                    "num_stages": 4,
                },
            },
            {
                "case": "n262144_d256_t1024_fp16",
                "dtype": "float16",
                "shape": {"N": 262144, "D": 256, "T": 1024},
                "config": {
                    "BLOCK_M": 64,
                    "BLOCK_N": 128,
                    "BLOCK_K": 32,
                    "GROUP_M": 8,
                    "num_warps": 4,
                    "num_stages": 4,
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
_CONSTEXPRS = ("BLOCK_K", "BLOCK_M", "BLOCK_N")
# kernel -> block -> the shape key of the dimension it tiles (`_fit_blocks`)
_TILE_KEYS = {"fwd": {"BLOCK_M": "N", "BLOCK_N": "T", "BLOCK_K": "D"}}
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


def _precision(allow_tf32: bool, device) -> str:
    """tl.dot's input precision: IEEE fp32, or where TF32 is allowed TF32 on a GPU and its Ascend
    counterpart HF32 on an NPU (triton-ascend refuses tf32: "please use input_precision='hf32' on
    Ascend instead", triton-ascend 3.2.0 triton/triton_patch/language/core.py, `dot`)."""
    if not allow_tf32:
        return "ieee"
    return "hf32" if device.type == "npu" else "tf32"


# <<< autotune generated block <<<


def default_config(kernel: str, shape: dict) -> dict:
    """Upstream's first autotune config (get_mm_configs, CUDA): its autotuner's pick among its
    eight is a timing on the GPU, not a rule."""
    if kernel != "fwd":
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd")
    return {"BLOCK_M": 32, "BLOCK_N": 64, "BLOCK_K": 32, "GROUP_M": 8, "num_warps": 2,
            "num_stages": 5}  # fmt: skip


def _launch_config(config, shape, tensor):
    """(constexpr blocks, launch options, GROUP_M) of the given or picked config."""
    if config is None:
        dtype = _DTYPE_NAMES.get(tensor.dtype, str(tensor.dtype))
        config = _pick_config("fwd", shape, dtype, tensor.device, default_config("fwd", shape))
    blocks, options = _split_config(config, tensor.device)
    return blocks, options, config.get("GROUP_M", 8)


def _check_inputs(x, w, bias):
    if x.dim() != 2 or w.dim() != 2 or x.size(1) != w.size(0):
        raise ValueError(f"x [N, D] @ w [D, T]: got x {tuple(x.shape)}, w {tuple(w.shape)}")
    n, t = x.size(0), w.size(1)
    if bias.shape not in ((t,), (n, t)):
        raise ValueError(f"bias must be [{t}] or [{n}, {t}], got {tuple(bias.shape)}")
    if not (x.dtype == w.dtype == bias.dtype):
        raise ValueError("x, w and bias must share one dtype")


def _buffers(x, t, silu, keep_z, out, silu_out):
    """(z, silu(z)) to write: upstream's `out` and `silu_out` where given, else new [N, T]
    tensors; None for what is not stored. A given buffer must be a contiguous [N, T] tensor of
    x's dtype (z and silu(z) share strides in the kernel), and `out` is refused where z is not
    stored (upstream returns it unwritten): every mode."""
    shape = (x.size(0), t)
    for name, given in (("out", out), ("silu_out", silu_out)):
        if given is not None and (
            tuple(given.shape) != shape or given.dtype != x.dtype or not given.is_contiguous()
        ):
            raise ValueError(f"{name} must be a contiguous {list(shape)} tensor of {x.dtype}")
    if out is not None and not keep_z:
        raise ValueError("out is given but z is not kept (silu and keep_unfused_out=False)")
    z = (out if out is not None else x.new_empty(shape)) if keep_z else None
    silu_z = (silu_out if silu_out is not None else x.new_empty(shape)) if silu else None
    return z, silu_z


def addmm_fwd(
    x, w, y, silu=False, keep_unfused_out=True, out=None, silu_out=None, *, allow_tf32=False,
    config=None, check=False,
):  # fmt: skip
    """(z, silu(z)) for z = x @ w + y in x's dtype, `y` the bias ([T] or [N, T]; upstream's
    triton_addmm_silu_fwd, its every argument): silu(z) None without `silu`, z None with `silu`
    and not `keep_unfused_out` (upstream returns an unwritten tensor there); written into `out`
    and `silu_out` where given. `allow_tf32`: tl.dot's TF32 (HF32 on an NPU), upstream's
    torch.backends.cuda.matmul.allow_tf32."""
    if _checked(check):
        _check_inputs(x, w, y)
    n, d = x.shape
    t = w.size(1)
    blocks, options, group = _launch_config(config, {"N": n, "D": d, "T": t}, x)
    keep_z = keep_unfused_out or not silu
    z, silu_z = _buffers(x, t, silu, keep_z, out, silu_out)
    if n == 0 or t == 0:
        return z, silu_z
    # The launch names what it reads and writes as before upstream's argument names came in (its
    # text keys the studies of the frozen configs): bias is upstream's y, out what is stored.
    bias, y = y, silu_z
    out = z if z is not None else y
    broadcast = bias.dim() == 1
    tiles = triton.cdiv(n, blocks["BLOCK_M"]) * triton.cdiv(t, blocks["BLOCK_N"])
    programs = min(tiles, MAX_PROGRAMS)
    _addmm_fwd_kernel[(programs,)](
        x, w, bias, out, y if silu else out, n, t, d, programs,
        x.stride(0), x.stride(1), w.stride(0), w.stride(1),
        0 if broadcast else bias.stride(0), bias.stride(-1), out.stride(0), out.stride(1),
        PRECISION=_precision(allow_tf32, x.device), BROADCAST_BIAS=broadcast, SILU=silu,
        KEEP_Z=keep_z, PERSISTENT=programs < tiles, GROUP_M=group, **blocks, **options,
    )  # fmt: skip
    return z, y


def addmm_bwd(x, w, z, grad_output, is_y_1d, silu=False, wgrad_stream=None, wgrad_event=None):
    """(dx, dw, dbias) in torch, as upstream's triton_addmm_silu_bwd: dz = silu'(z) * grad_output
    (with `silu`, z as the forward stored it), dx = dz w^T, dw = x^T dz, dbias = dz summed over
    the rows for a [T] bias (`is_y_1d`, else dz). Upstream's second stream for dw
    (`wgrad_stream`, `wgrad_event`) is refused in every mode: dw runs on the current stream."""
    if wgrad_stream is not None or wgrad_event is not None:
        raise ValueError("wgrad_stream and wgrad_event are not ported (dw on the current stream)")
    dz = torch.ops.aten.silu_backward(grad_output, z) if silu else grad_output
    return torch.mm(dz, w.t()), torch.mm(x.t(), dz), dz.sum(0) if is_y_1d else dz


class AddmmFunction(torch.autograd.Function):
    """Autograd of the port: z = x @ w + y (the bias), silu(z) with `silu` (upstream's
    _AddMmFunction)."""

    @staticmethod
    def forward(ctx, x, w, y, silu):
        z, silu_z = addmm_fwd(x, w, y, silu)
        ctx.save_for_backward(x, w, z if silu else None)
        ctx.bias_1d, ctx.silu = y.dim() == 1, silu
        return silu_z if silu else z

    @staticmethod
    def backward(ctx, dout):
        x, w, z = ctx.saved_tensors
        return (*addmm_bwd(x, w, z, dout, ctx.bias_1d, ctx.silu), None)


def addmm(input, mat1, mat2, silu=False):
    """Upstream's triton_addmm(input, mat1, mat2, silu): input + mat1 @ mat2, differentiable."""
    return AddmmFunction.apply(mat1, mat2, input, silu)
