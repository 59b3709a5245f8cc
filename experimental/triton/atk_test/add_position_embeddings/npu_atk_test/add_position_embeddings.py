# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton add_position_embeddings (NVIDIA/recsys-examples,
# examples/hstu/ops/triton_ops/triton_position.py, see README.md), written here:
# out[row n of b] = x[row] * scale + dense[min(n + ind_offsets[b], high_inds[b])], and its
# backward: dx = dout * scale, ddense[k] = the rows of dout at clamped position k, summed.
# Differences from upstream: a program count (PROGRAMS programs per core walking the blocks, or
# one per block, at most 32768: an Ascend launch takes at most 65535 blocks) over a 1-D grid in
# upstream's block order; every row is computed, also those of a sequence longer than
# max_seq_len (upstream leaves them unwritten); the backward tiles D (BLOCK_D) and sums BLOCK_N
# rows a step past high_inds (upstream: the whole row, one row a step), and reads no row past a
# sequence's end where high_inds is over its length (upstream would); the arithmetic in fp32; the
# config passed per launch from the frozen configs below (upstream: Triton's autotuner for the
# forward).
"""Triton port of add_position_embeddings: its forward and backward kernels."""

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
def _add_position_fwd_kernel(
    offsets_ptr, high_ptr, ind_ptr, x_ptr, dense_ptr, out_ptr, max_seq_len, batch, D, scale,
    num_programs, stride_xn, stride_dk, stride_on, HAS_IND_OFFSETS: tl.constexpr,
    SCALE: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """Upstream's blocks in its launch order (sequences, then max_seq_len's row blocks), each
    all of D, BLOCK_D columns at a time; a block's program also does the row blocks
    max_seq_len rows further on of a sequence longer than max_seq_len."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(max_seq_len, BLOCK_N)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, batch * tiles_n, num_programs):
        seq = tile % batch
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
        high = tl.load(high_ptr + seq).to(tl.int32)
        shift = 0
        if HAS_IND_OFFSETS:
            shift = tl.load(ind_ptr + seq).to(tl.int32)
        for start in range((tile // batch) * BLOCK_N, seqlen, tiles_n * BLOCK_N):
            rows = start + offs_n
            mask_n = rows < seqlen
            positions = tl.minimum(rows + shift, high)
            x_rows = x_ptr + (begin + rows)[:, None] * stride_xn
            dense_rows = dense_ptr + positions.to(tl.int64)[:, None] * stride_dk
            out_rows = out_ptr + (begin + rows)[:, None] * stride_on
            for first in range(0, D, BLOCK_D):
                cols = first + offs_d
                mask = mask_n[:, None] & (cols < D)[None, :]
                x = tl.load(x_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
                if SCALE:
                    x = x * scale
                dense = tl.load(dense_rows + cols[None, :], mask=mask, other=0.0).to(tl.float32)
                tl.store(out_rows + cols[None, :], (x + dense).to(out_ptr.dtype.element_ty),
                         mask=mask)  # fmt: skip


@triton.jit
def _add_position_bwd_kernel(
    offsets_ptr, high_ptr, dout_ptr, ddense_ptr, dx_ptr, batch, K, D, scale, num_programs,
    stride_gn, stride_dk, stride_xn, SCALE: tl.constexpr, BLOCK_N: tl.constexpr,
    BLOCK_D: tl.constexpr,
):  # fmt: skip
    """One block per (position k, column block), k fastest: ddense[k] = over the sequences, dout's
    row k where k < high_inds[b], or its rows from high_inds[b] on where k = high_inds[b]; with
    SCALE, dx = dout * scale of the rows it reads (each row is read by one position's block)."""
    pid = tl.program_id(0)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, K * tl.cdiv(D, BLOCK_D), num_programs):
        k = tile % K
        cols = (tile // K) * BLOCK_D + offs_d
        mask_d = cols < D
        acc = tl.zeros([BLOCK_D], dtype=tl.float32)
        for seq in range(0, batch):
            high = tl.load(high_ptr + seq).to(tl.int32)
            begin = tl.load(offsets_ptr + seq).to(tl.int64)
            seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
            first = k  # the rows of this sequence at position k: first .. last - 1
            last = k + 1
            if k == high:
                last = seqlen
            if k > high:
                last = k
            for start in range(first, tl.minimum(last, seqlen), BLOCK_N):
                rows = start + offs_n
                mask = (rows < tl.minimum(last, seqlen))[:, None] & mask_d[None, :]
                at = (begin + rows)[:, None]
                dout = tl.load(dout_ptr + at * stride_gn + cols[None, :], mask=mask, other=0.0)
                dout = dout.to(tl.float32)
                acc += tl.sum(dout, axis=0)
                if SCALE:
                    tl.store(dx_ptr + at * stride_xn + cols[None, :],
                             (dout * scale).to(dx_ptr.dtype.element_ty), mask=mask)  # fmt: skip
        tl.store(ddense_ptr + tl.cast(k, tl.int64) * stride_dk + cols,
                 acc.to(ddense_ptr.dtype.element_ty), mask=mask_d)  # fmt: skip


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


def default_config(kernel: str, shape: dict) -> dict:
    """fwd: the first config of upstream's _add_position_embeddings_configs (its autotuner's pick
    among 18 is a timing on the GPU) with its BLOCK_D (next_pow2(D) below 64, else 64); bwd:
    upstream's backward, the whole row one row a step at Triton's default warps and stages."""
    d = triton.next_power_of_2(shape["D"])
    if kernel == "fwd":
        return {"BLOCK_N": 16, "BLOCK_D": min(d, 64), "num_warps": 2, "num_stages": 1}
    if kernel == "bwd":
        return {"BLOCK_N": 1, "BLOCK_D": d, "num_warps": 4, "num_stages": 3}
    raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd")


def _shape(batch, max_seq_len, d, k):
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d, "K": k}


def _check_inputs(jagged, offsets, high_inds, dense, ind_offsets=None):
    """Upstream's contract: jagged [sum_L, D], dense [K, D], B + 1 offsets, high_inds [B] within
    0..K - 1 and each sequence's length (ind_offsets [B] too where given)."""
    if jagged.dim() != 2 or dense.dim() != 2 or jagged.size(1) != dense.size(1):
        raise ValueError(
            f"jagged [sum_L, D] and dense [K, D]: got {tuple(jagged.shape)}, {tuple(dense.shape)}"
        )
    _check_offsets(offsets, jagged.size(0))
    batch = offsets.numel() - 1
    for name, given in (("high_inds", high_inds), ("ind_offsets", ind_offsets)):
        if given is not None and tuple(given.shape) != (batch,):
            raise ValueError(f"{name} must be [B] = [{batch}], got {tuple(given.shape)}")
    lengths = (offsets[1:] - offsets[:-1]).tolist()
    for b, (high, length) in enumerate(zip(high_inds.tolist(), lengths, strict=True)):
        if not 0 <= high < dense.size(0) or high > length:
            raise ValueError(
                f"high_inds[{b}] = {high} must be within 0..K - 1 = {dense.size(0) - 1} and at "
                f"most the sequence's length {length}"
            )


def add_position_embeddings_fwd(
    jagged, jagged_offsets, high_inds, max_seq_len, dense, scale=1.0, ind_offsets=None, *,
    config=None, check=False,
):  # fmt: skip
    """out = jagged * scale + dense[min(n + ind_offsets[b], high_inds[b])] for row n of sequence
    b, in jagged's dtype (upstream's forward, its arguments)."""
    if _checked(check):
        _check_inputs(jagged, jagged_offsets, high_inds, dense, ind_offsets)
    x, dense = jagged.contiguous(), dense.contiguous()
    batch, d = high_inds.numel(), x.size(1)
    shape = _shape(batch, max_seq_len, d, dense.size(0))
    blocks, options, programs = _programs_config("fwd", config, shape, x)
    out = torch.empty_like(x)
    if out.numel() == 0:
        return out
    rows = max(int(max_seq_len), 1)  # upstream's grid: row blocks per sequence (at least one)
    tiles = batch * triton.cdiv(rows, blocks["BLOCK_N"])
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, x.device)
    _add_position_fwd_kernel[grid](
        jagged_offsets, high_inds, high_inds if ind_offsets is None else ind_offsets, x, dense,
        out, rows, batch, d, scale, grid[0], x.stride(0), dense.stride(0), out.stride(0),
        HAS_IND_OFFSETS=ind_offsets is not None, SCALE=scale != 1.0, **blocks, **options,
    )  # fmt: skip
    return out


def add_position_embeddings_bwd(
    d_out, jagged_offsets, high_inds, max_seq_len, num_positions, scale=1.0, *, config=None
):
    """(d_jagged, d_dense): d_out * scale (d_out itself at scale 1, as upstream's) and the
    [num_positions, D] sums of d_out's rows at each clamped position, in d_out's dtype;
    max_seq_len keys the config only."""
    dout = d_out.contiguous()
    batch, d = high_inds.numel(), dout.size(1)
    shape = _shape(batch, max_seq_len, d, num_positions)
    blocks, options, programs = _programs_config("bwd", config, shape, dout)
    scaled = scale != 1.0
    dx = torch.empty_like(dout) if scaled else d_out
    ddense = torch.zeros(num_positions, d, dtype=dout.dtype, device=dout.device)
    if ddense.numel() == 0 or batch == 0:
        return dx, ddense
    tiles = num_positions * triton.cdiv(d, blocks["BLOCK_D"])
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, dout.device)
    _add_position_bwd_kernel[grid](
        jagged_offsets, high_inds, dout, ddense, dx, batch, num_positions, d, scale, grid[0],
        dout.stride(0), ddense.stride(0), dx.stride(0), SCALE=scaled, **blocks, **options,
    )  # fmt: skip
    return dx, ddense


class AddPositionEmbeddingsFunction(torch.autograd.Function):
    """Autograd of the port (upstream's _AddPositionEmbeddingsFunction): the gradients of jagged
    and dense; its backward refuses the inference form (ind_offsets), as upstream's."""

    @staticmethod
    def forward(
        ctx, jagged, jagged_offsets, high_inds, max_seq_len, dense, scale=1.0, ind_offsets=None
    ):
        out = add_position_embeddings_fwd(
            jagged, jagged_offsets, high_inds, max_seq_len, dense, scale, ind_offsets
        )
        ctx.save_for_backward(jagged_offsets, high_inds)
        ctx.form = (max_seq_len, dense.size(0), scale, ind_offsets is None)
        return out

    @staticmethod
    def backward(ctx, d_out):
        max_seq_len, num_positions, scale, no_ind_offsets = ctx.form
        if not no_ind_offsets:
            raise ValueError("no backward with ind_offsets (upstream's inference form, its too)")
        jagged_offsets, high_inds = ctx.saved_tensors
        d_jagged, d_dense = add_position_embeddings_bwd(
            d_out, jagged_offsets, high_inds, max_seq_len, num_positions, scale
        )
        return d_jagged, None, None, None, d_dense, None, None


def triton_add_position_embeddings(
    jagged, jagged_offsets, high_inds, max_seq_len, dense, scale=1.0, ind_offsets=None
):
    """Upstream's triton_add_position_embeddings, its every argument: jagged [sum_L, D] * scale
    plus dense [K, D] at each row's clamped position, differentiable."""
    return AddPositionEmbeddingsFunction.apply(
        jagged, jagged_offsets, high_inds, max_seq_len, dense, scale, ind_offsets
    )
