# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Ascend port of recsys-examples' Triton add_timestamp_positional_embeddings
# (NVIDIA/recsys-examples, examples/hstu/ops/triton_ops/triton_position.py, see README.md),
# written here: out[row n of b] = x[row] + pos[p] + ts[t], p the row's position counted back from
# its sequence's targets (its first max_contextual_seq_len rows forward), t its age against the
# sequence's last timestamp bucketed by sqrt or log of minutes; and the backward's sums of dout per
# index over the sorted indices (upstream's torch.sort), one launch a table. Differences from
# upstream: a program count (PROGRAMS programs per core walking the blocks, or one per block, at
# most 32768: an Ascend launch takes at most 65535 blocks) over 1-D grids in upstream's block
# order; every row is computed, also those of a sequence longer than max_seq_len; the backward
# tiles D (BLOCK_D) and sums a run of equal indices in fp32 (upstream: in dout's dtype); the adds in
# fp32; the config passed per launch from the frozen configs below (upstream: Triton's autotuner).
"""Triton port of add_timestamp_position_embeddings: its forward and backward kernels."""

import math
import os
import re
import warnings

import torch
import triton
import triton.language as tl

#: The most programs of a launch; below it, one block per program (upstream's grid).
MAX_PROGRAMS = 32768
#: Upstream's launcher fixes these: the time buckets (a table of 2049 rows) and their minutes.
NUM_TIME_BUCKETS, TIME_BUCKET_INCREMENTS = 2048, 60.0


@triton.jit
def _add_timestamp_position_fwd_kernel(
    offsets_ptr, lengths_ptr, targets_ptr, stamps_ptr, x_ptr, pos_ptr, ts_ptr, out_ptr,
    pos_inds_ptr, ts_inds_ptr, max_seq_len, batch, D, num_time_buckets, time_bucket_increments,
    max_contextual_seq_len, max_pos_ind, num_programs, stride_xn, stride_pn, stride_tn,
    stride_on, HAS_TARGETS: tl.constexpr, INTERLEAVE_TARGETS: tl.constexpr,
    TIME_BUCKET_FN: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """Upstream's blocks in its launch order (sequences, then max_seq_len's row blocks); a
    block's program also does the row blocks max_seq_len rows further on of a longer sequence.
    Each row's two indices are stored for the backward."""
    pid = tl.program_id(0)
    tiles_n = tl.cdiv(max_seq_len, BLOCK_N)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, batch * tiles_n, num_programs):
        seq = tile % batch
        begin = tl.load(offsets_ptr + seq).to(tl.int64)
        end = tl.load(offsets_ptr + seq + 1).to(tl.int64)
        high = tl.load(lengths_ptr + seq).to(tl.int32)
        if HAS_TARGETS:
            targets = tl.load(targets_ptr + seq).to(tl.int32)
            high = high - 2 * targets if INTERLEAVE_TARGETS else high - targets
        query_time = tl.load(stamps_ptr + end - 1)
        for start in range(
            (tile // batch) * BLOCK_N, (end - begin).to(tl.int32), tiles_n * BLOCK_N
        ):
            rows = start + offs_n
            mask_n = rows < (end - begin)
            positions = high - tl.minimum(rows, high) + max_contextual_seq_len
            positions = tl.minimum(positions, max_pos_ind - 1)
            positions = tl.where(rows < max_contextual_seq_len, rows, positions)
            stamps = tl.load(stamps_ptr + begin + rows, mask=mask_n, other=0)
            age = query_time - stamps
            minutes = tl.where(age > 1e-6, age, 1e-6) / time_bucket_increments
            buckets = tl.log(minutes) if TIME_BUCKET_FN == "log" else tl.sqrt(minutes)
            buckets = buckets.to(tl.int32)
            buckets = tl.minimum(tl.maximum(buckets, 0), num_time_buckets)
            tl.store(pos_inds_ptr + begin + rows, positions, mask=mask_n)
            tl.store(ts_inds_ptr + begin + rows, buckets, mask=mask_n)
            x_rows = x_ptr + (begin + rows)[:, None] * stride_xn
            pos_rows = pos_ptr + positions.to(tl.int64)[:, None] * stride_pn
            ts_rows = ts_ptr + buckets.to(tl.int64)[:, None] * stride_tn
            out_rows = out_ptr + (begin + rows)[:, None] * stride_on
            for first in range(0, D, BLOCK_D):
                cols = (first + offs_d)[None, :]
                mask = mask_n[:, None] & (cols < D)
                x = tl.load(x_rows + cols, mask=mask, other=0.0).to(tl.float32)
                x += tl.load(pos_rows + cols, mask=mask, other=0.0).to(tl.float32)
                x += tl.load(ts_rows + cols, mask=mask, other=0.0).to(tl.float32)
                tl.store(out_rows + cols, x.to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_embeddings_bwd_kernel(
    dout_ptr, keys_ptr, values_ptr, grad_ptr, size, D, num_programs, stride_gn, stride_on,
    BLOCK: tl.constexpr, BLOCK_D: tl.constexpr,
):  # fmt: skip
    """grad[key] += dout[value] over BLOCK entries of the (key, value) pairs sorted by key: each
    run of equal keys summed in fp32, then added atomically into the fp32 gradient (a run may
    span blocks). One block per (BLOCK entries, column block), entries fastest."""
    pid = tl.program_id(0)
    blocks = tl.cdiv(size, BLOCK)
    offs_d = tl.arange(0, BLOCK_D)
    for tile in range(pid, blocks * tl.cdiv(D, BLOCK_D), num_programs):
        cols = (tile // blocks) * BLOCK_D + offs_d
        mask_d = cols < D
        key = tl.full([], -1, tl.int64)
        acc = tl.zeros([BLOCK_D], dtype=tl.float32)
        for i in range(0, BLOCK):
            entry = (tile % blocks) * BLOCK + i
            if entry < size:
                value = tl.load(values_ptr + entry).to(tl.int64)
                row = tl.load(dout_ptr + value * stride_gn + cols, mask=mask_d, other=0.0)
                new = tl.load(keys_ptr + entry).to(tl.int64)
                if new == key:
                    acc += row.to(tl.float32)
                else:
                    if key >= 0:
                        tl.atomic_add(grad_ptr + key * stride_on + cols, acc, mask=mask_d)
                    key = new
                    acc = row.to(tl.float32)
        if key >= 0:
            tl.atomic_add(grad_ptr + key * stride_on + cols, acc, mask=mask_d)


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
_TILE_KEYS = {"fwd": {"BLOCK_N": "max_seq_len", "BLOCK_D": "D"}, "bwd": {"BLOCK_D": "D"}}
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
    """fwd: the first config of upstream's _add_position_embeddings_configs (its kernel's
    autotune list) with its BLOCK_D (next_pow2(D) below 64, else 64); bwd: the first of
    _add_embeddings_bwd_configs with its whole row. Its autotuner's picks are timings on the GPU."""
    d = triton.next_power_of_2(shape["D"])
    if kernel == "fwd":
        return {"BLOCK_N": 16, "BLOCK_D": min(d, 64), "num_warps": 2, "num_stages": 1}
    if kernel == "bwd":
        return {"BLOCK": 32, "BLOCK_D": d, "num_warps": 2, "num_stages": 2}
    raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd")


def _shape(batch, max_seq_len, d, k, contextual):
    return {"B": batch, "max_seq_len": int(max_seq_len), "D": d, "K": k, "C": int(contextual)}


def _check_inputs(seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps,
                  seq_lengths, num_targets):  # fmt: skip
    """Upstream's contract: [sum_L, D] rows, tables of D columns, the time table of 2049 rows,
    one timestamp a row, B + 1 offsets whose differences are seq_lengths, num_targets [B]."""
    d = seq_embeddings.size(1)
    if seq_embeddings.dim() != 2 or pos_embeddings.dim() != 2 or ts_embeddings.dim() != 2:
        raise ValueError("seq_embeddings, pos_embeddings and ts_embeddings must be 2-D")
    if pos_embeddings.size(1) != d or ts_embeddings.size(1) != d:
        raise ValueError(f"pos_embeddings and ts_embeddings must have D = {d} columns")
    if ts_embeddings.size(0) <= NUM_TIME_BUCKETS:
        raise ValueError(f"ts_embeddings needs {NUM_TIME_BUCKETS + 1} rows (upstream's buckets)")
    if tuple(timestamps.shape) != (seq_embeddings.size(0),):
        raise ValueError(f"timestamps must be [sum_L] = [{seq_embeddings.size(0)}]")
    _check_offsets(seq_offsets, seq_embeddings.size(0))
    if not torch.equal(seq_offsets[1:] - seq_offsets[:-1], seq_lengths.to(seq_offsets.dtype)):
        raise ValueError("seq_lengths must be the differences of seq_offsets")
    if num_targets is not None and num_targets.shape != seq_lengths.shape:
        raise ValueError(f"num_targets must be [B] = [{seq_lengths.numel()}]")


def _unported(time_bucket_fn):
    if time_bucket_fn not in ("sqrt", "log"):
        raise ValueError(
            f"time_bucket_fn must be 'sqrt' or 'log' (upstream's), not {time_bucket_fn!r}"
        )


def add_timestamp_position_embeddings_fwd(
    seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps, max_seq_len,
    max_contextual_seq_len, seq_lengths, num_targets, interleave_targets, time_bucket_fn, *,
    config=None, check=False,
):  # fmt: skip
    """(out, pos_inds, ts_inds): out in seq_embeddings' dtype, each row's int32 position and
    time bucket (what the backward sums by), upstream's forward with its arguments."""
    _unported(time_bucket_fn)
    if _checked(check):
        _check_inputs(seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps,
                      seq_lengths, num_targets)  # fmt: skip
    x = seq_embeddings.contiguous()
    pos, ts = pos_embeddings.contiguous(), ts_embeddings.contiguous()
    batch, d = seq_lengths.numel(), x.size(1)
    shape = _shape(batch, max_seq_len, d, pos.size(0), max_contextual_seq_len)
    blocks, options, programs = _programs_config("fwd", config, shape, x)
    out = torch.empty_like(x)
    pos_inds = torch.empty(x.size(0), dtype=torch.int32, device=x.device)
    ts_inds = torch.empty(x.size(0), dtype=torch.int32, device=x.device)
    if x.size(0) == 0:
        return out, pos_inds, ts_inds
    rows = max(int(max_seq_len), 1)  # upstream's grid: row blocks per sequence (at least one)
    tiles = batch * triton.cdiv(rows, blocks["BLOCK_N"])
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, x.device)
    targets = seq_lengths if num_targets is None else num_targets
    _add_timestamp_position_fwd_kernel[grid](
        seq_offsets, seq_lengths, targets, timestamps.contiguous(), x, pos, ts, out, pos_inds,
        ts_inds, rows, batch, d, NUM_TIME_BUCKETS, TIME_BUCKET_INCREMENTS,
        int(max_contextual_seq_len), pos.size(0), grid[0], x.stride(0), pos.stride(0),
        ts.stride(0), out.stride(0), HAS_TARGETS=num_targets is not None,
        INTERLEAVE_TARGETS=bool(interleave_targets), TIME_BUCKET_FN=time_bucket_fn, **blocks,
        **options,
    )  # fmt: skip
    return out, pos_inds, ts_inds


def _embedding_grad(d_out, keys, values, rows, blocks, options, programs):
    """The fp32 [rows, D] sums of d_out's rows per key (keys sorted, values their rows)."""
    grad = torch.zeros(rows, d_out.size(1), dtype=torch.float32, device=d_out.device)
    size = keys.numel()
    if size == 0 or grad.numel() == 0:
        return grad
    tiles = triton.cdiv(size, blocks["BLOCK"]) * triton.cdiv(d_out.size(1), blocks["BLOCK_D"])
    grid = _grid(min(tiles, MAX_PROGRAMS), programs, d_out.device)
    _add_embeddings_bwd_kernel[grid](
        d_out, keys, values, grad, size, d_out.size(1), grid[0], d_out.stride(0), grad.stride(0),
        **blocks, **options,
    )  # fmt: skip
    return grad


def add_timestamp_position_embeddings_bwd(
    d_out, pos_keys, pos_values, ts_keys, ts_values, pos_embeddings, ts_embeddings, batch,
    max_seq_len, max_contextual_seq_len=0, *, config=None,
):  # fmt: skip
    """(d_pos, d_ts) in the tables' dtypes: d_out's rows summed per position and per time bucket,
    from the indices sorted by key (torch.sort of the forward's pos_inds and ts_inds: keys,
    values). batch (B), max_seq_len and max_contextual_seq_len key the config only."""
    d_out = d_out.contiguous()
    shape = _shape(
        batch, max_seq_len, d_out.size(1), pos_embeddings.size(0), max_contextual_seq_len
    )
    if config is None:
        dtype = _DTYPE_NAMES.get(d_out.dtype, str(d_out.dtype))
        config = _pick_config("bwd", shape, dtype, d_out.device, default_config("bwd", shape))
    blocks, options, programs = _programs_config("bwd", config, shape, d_out)
    blocks = {**blocks, "BLOCK": config["BLOCK"]}  # upstream's name (its autotune list's)
    d_pos = _embedding_grad(d_out, pos_keys, pos_values, pos_embeddings.size(0), blocks, options,
                            programs)  # fmt: skip
    d_ts = _embedding_grad(d_out, ts_keys, ts_values, ts_embeddings.size(0), blocks, options,
                           programs)  # fmt: skip
    return d_pos.to(pos_embeddings.dtype), d_ts.to(ts_embeddings.dtype)


class AddTimestampPositionEmbeddingsFunction(torch.autograd.Function):
    """Autograd of the port (upstream's _AddTimestampPositionEmbeddingsFunction): the forward
    sorts the indices (torch.sort, upstream's fallback), the backward sums by them."""

    @staticmethod
    def forward(
        ctx, seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps, max_seq_len,
        max_contextual_seq_len, seq_lengths, num_targets, interleave_targets, time_bucket_fn,
    ):  # fmt: skip
        out, pos_inds, ts_inds = add_timestamp_position_embeddings_fwd(
            seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps, max_seq_len,
            max_contextual_seq_len, seq_lengths, num_targets, interleave_targets, time_bucket_fn,
        )  # fmt: skip
        ctx.save_for_backward(*torch.sort(pos_inds), *torch.sort(ts_inds), pos_embeddings,
                              ts_embeddings)  # fmt: skip
        ctx.form = (seq_lengths.numel(), max_seq_len, max_contextual_seq_len)
        return out

    @staticmethod
    def backward(ctx, d_out):
        pos_keys, pos_values, ts_keys, ts_values, pos, ts = ctx.saved_tensors
        d_pos, d_ts = add_timestamp_position_embeddings_bwd(
            d_out, pos_keys, pos_values, ts_keys, ts_values, pos, ts, *ctx.form
        )
        return d_out, None, d_pos, d_ts, None, None, None, None, None, None, None


def triton_add_timestamp_positional_embeddings(
    seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps, max_seq_len,
    max_contextual_seq_len, seq_lengths, num_targets, interleave_targets, time_bucket_fn,
):  # fmt: skip
    """Upstream's triton_add_timestamp_positional_embeddings, its every argument:
    seq_embeddings plus the position and timestamp embeddings of each row, differentiable."""
    return AddTimestampPositionEmbeddingsFunction.apply(
        seq_embeddings, seq_offsets, pos_embeddings, ts_embeddings, timestamps, max_seq_len,
        max_contextual_seq_len, seq_lengths, num_targets, interleave_targets, time_bucket_fn,
    )  # fmt: skip
