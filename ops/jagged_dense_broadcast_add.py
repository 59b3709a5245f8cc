"""jagged_dense_broadcast_add (recsys-examples' Triton `triton_jagged_dense_broadcast_add`): each
row of sequence b of a jagged tensor plus the dense row y[b].

Shapes: x [sum_L, D] jagged, y [B, D] dense (upstream: jagged, dense), out [sum_L, D]. Backward
as upstream's autograd Function: dx = dout itself (no kernel), dy[b] = the rows of dout in
sequence b summed (`jagged_reduce_sum`). As for jagged_dense_bmm_broadcast_add, max_seq_len sizes
upstream's forward grid (its rows past max_seq_len are left unwritten) and keys its autotuner,
while its backward sums every row; the port computes every row whatever max_seq_len is.

Both kernels move memory and nothing else, so both take a program count (`PROGRAMS`: programs per
vector core walking the blocks, or one per block) beside their blocks. The forward also takes
its grid (`GRID`): upstream's blocks, a sequence's row blocks up to max_seq_len, most of them
empty where lengths are skewed (two thirds on b256_n4096_d128), or row blocks of the jagged rows,
each row's sequence found by a binary search of the offsets and y read per row.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .cases import total_rows
from .jagged import sequence_chunks
from .jagged_dense_bmm_broadcast_add import (
    MAX_PROGRAMS,
    UPSTREAM_FILE,
    UPSTREAM_SHA256,
    RecsysJaggedOp,
    max_length,
)
from .norm import fits_registers
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "jagged_dense_broadcast_add"

# (B, max_seq_len, D, lengths): B = 1, a single row, an empty sequence, a sequence longer than
# max_seq_len (the port alone), D not a power of two below and above upstream's 64-wide column
# block, and D over the largest BLOCK_D (several column blocks at any config).
ACCURACY_SHAPES = (
    (1, 16, 16, (16,)),
    (1, 8, 24, (1,)),
    (4, 16, 20, (0, 5, 16, 23)),
    (3, 40, 100, (40, 0, 33)),
    (2, 24, 1000, (24, 7)),
)
# HSTU sizes: 1.7 x 10^5 to 7 x 10^5 rows of D 128-256.
PERFORMANCE_SHAPES = (
    (512, 1024, 256, "bfloat16"),
    (1024, 512, 256, "float16"),
    (256, 4096, 128, "float32"),
    (2048, 1024, 256, "bfloat16"),
)


def upstream_block_d(case: Case) -> int:
    """Upstream's BLOCK_D of both kernels: next_pow2(D) below 64, else 64."""
    d = case.shape["D"]
    return next_pow2(d) if d < 64 else 64


def fwd_default(case: Case) -> Config:
    """The first config of upstream's `_get_jagged_dense_broadcast_add_configs` (BLOCK_N 16, one
    stage, 2 warps; its autotuner's pick among the 18 is a timing on the GPU) and its BLOCK_D."""
    return {"BLOCK_N": 16, "BLOCK_D": upstream_block_d(case), "num_warps": 2, "num_stages": 1}


def bwd_default(case: Case) -> Config:
    """Upstream's jagged_reduce_sum: one row a step (BLOCK_N 1), its BLOCK_D, and Triton's
    default 4 warps and 3 stages (it is not autotuned)."""
    return {"BLOCK_N": 1, "BLOCK_D": upstream_block_d(case), "num_warps": 4, "num_stages": 3}


def _fits(tunable: str, key: str, default: Callable[[Case], Config]) -> BlockFits:
    """A block larger than its dimension padded only moves padding (upstream's default stays
    allowed)."""
    return BlockFits(tunable, lambda c: max(next_pow2(c.shape[key]), default(c)[tunable]), key)


def _grid(tiled: str) -> Callable[[Config, Case], tuple[int]]:
    """The classic launch of a kernel, upstream's grid: per sequence, the blocks of the `tiled`
    dimension (max_seq_len's rows by BLOCK_N, or D's columns by BLOCK_D); or, for a forward
    config of GRID "rows", the row blocks of the jagged rows. At most MAX_PROGRAMS programs,
    which then walk the blocks."""
    block = {"max_seq_len": "BLOCK_N", "D": "BLOCK_D"}[tiled]

    def grid(config: Config, case: Case) -> tuple[int]:
        if by_rows(config):
            blocks = -(-total_rows(case) // config["BLOCK_N"])
        else:
            blocks = case.shape["B"] * -(-max(case.shape[tiled], 1) // config[block])
        return (max(1, min(MAX_PROGRAMS, blocks)),)

    return grid


def by_rows(config: Config) -> bool:
    return config.get("GRID") == "rows"


def _fwd_tiles(config: Config, case: Case) -> int:
    """x's tile in its dtype and in fp32 (fp32 needs no second copy); the sum and its cast take
    those buffers' places and y's row finds room beside them, a bound from below: for the 910B
    the compiler plans 99840 B for a 64 x 256 bf16 tile and 196608 B for 128 x 256, 6 B per
    element of the tile (the compile matrix, docs/benchmarks.md). Over row blocks y is a tile of
    as many rows, and the search's bounds and offsets are BLOCK_N rows of int32 and int64."""
    e, bd, bn = case.torch_dtype.itemsize, config["BLOCK_D"], config["BLOCK_N"]
    tile = bn * bd * (e + 4 if e < 4 else 4)
    return 2 * tile + 16 * bn if by_rows(config) else tile


def _fwd_stream(config: Config, case: Case) -> int:
    e, bn = case.torch_dtype.itemsize, config["BLOCK_N"]
    return e * config["BLOCK_D"] * (2 * bn if by_rows(config) else bn + 1)


#: The forward's grid: upstream's ("sequences", the default) or row blocks of the jagged rows.
GRID = Tunable("GRID", ("sequences", "rows"), role=Role.LAUNCHER_ARGUMENT, default="sequences")


def _bwd_tiles(config: Config, case: Case) -> int:
    """dout's tile in its dtype and in fp32, the fp32 accumulator of as many rows, and the summed
    row in fp32 and its cast."""
    e, bd = case.torch_dtype.itemsize, config["BLOCK_D"]
    return config["BLOCK_N"] * bd * (e + 8) + (4 + e) * bd


def _bwd_stream(config: Config, case: Case) -> int:
    return case.torch_dtype.itemsize * config["BLOCK_N"] * config["BLOCK_D"]


FWD = KernelSpec(
    name="fwd",
    tunables=(
        Tunable("BLOCK_N", pow2_range(1, 128)),
        Tunable("BLOCK_D", pow2_range(1, 512)),
        Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION),
        Tunable("num_stages", (1, 2), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
        GRID,
    ),
    outputs=("out",),
    default=fwd_default,
    grid=_grid("max_seq_len"),
    tile_bytes=_fwd_tiles,
    stream_bytes=_fwd_stream,
    constraints=(
        _fits("BLOCK_N", "max_seq_len", fwd_default),
        _fits("BLOCK_D", "D", fwd_default),
        fits_registers,
    ),
    port_kernel="_jagged_dense_add_kernel",
    upstream_kernel="jagged_dense_broadcast_add_kernel",
)
BWD = KernelSpec(
    name="bwd",
    tunables=(
        Tunable("BLOCK_N", pow2_range(1, 128)),
        Tunable("BLOCK_D", pow2_range(1, 512)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        Tunable("num_stages", (1, 2, 3), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("dy",),
    default=bwd_default,
    grid=_grid("D"),
    tile_bytes=_bwd_tiles,
    stream_bytes=_bwd_stream,
    constraints=(
        _fits("BLOCK_N", "max_seq_len", bwd_default),
        _fits("BLOCK_D", "D", bwd_default),
        fits_registers,
    ),
    port_kernel="_jagged_reduce_sum_kernel",
    upstream_kernel="jagged_reduce_sum",
)


class JaggedDenseBroadcastAdd(RecsysJaggedOp):
    name = NAME
    summary = "Jagged [sum_L, D] plus dense [B, D] per sequence -> jagged [sum_L, D]; fwd and bwd"
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("triton_jagged_dense_broadcast_add", "_JaggedDenseBroadcastAddFunction"),
        lines="366-537",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("B", "max_seq_len", "D")
    input_names = ("x", "y", "offsets", "max_seq_len", "dout")
    #: dx = dout (upstream's backward returns it as it is): no kernel, no output of its own.
    output_names = ("out", "dy")
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES
    upstream_function = "_JaggedDenseBroadcastAddFunction"
    upstream_grads = {"dy": 3}
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}
    kernels = (FWD, BWD)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = self.generator(case, seed)
        b, d = case.shape["B"], case.shape["D"]
        rows = total_rows(case)
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "y": torch.randn(b, d, generator=gen),
            "dout": torch.randn(rows, d, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {**out, **self.offsets(case, device)}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """out = x + y[sequence of the row], dy[b] = the rows of dout in sequence b summed, every
        row; in chunks of sequences (a performance case's row index is large)."""
        x, y, dout = (inputs[k].to(compute_dtype) for k in ("x", "y", "dout"))
        offsets = inputs["offsets"]
        lengths = offsets[1:] - offsets[:-1]
        out, dy = torch.empty_like(x), torch.zeros_like(y)
        for i, j in sequence_chunks(offsets, max(max_length(offsets), 1)):
            first, last = int(offsets[i]), int(offsets[j])
            seq = torch.repeat_interleave(torch.arange(i, j, device=x.device), lengths[i:j])
            out[first:last] = x[first:last] + y[seq]
            dy.index_add_(0, seq, dout[first:last])
        return {"out": out, "dy": dy}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """R rows of D. fwd: x (R) and y (B rows) read, out (R) written; R D adds. bwd: dout (R)
        read, dy (B rows) written; R D adds (dx = dout is no kernel)."""
        b, d = case.shape["B"], case.shape["D"]
        r, size = total_rows(case), case.torch_dtype.itemsize
        if part == "fwd":
            return (2 * r + b) * d * size, r * d
        return (r + b) * d * size, r * d

    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        port = load_port(self.name)

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            x, y, offsets = inputs["x"], inputs["y"], inputs["offsets"]
            n = int(inputs["max_seq_len"])
            return {"out": port.jagged_dense_broadcast_add_fwd(x, y, offsets, n, config=config)}

        def bwd(inputs: Tensors, config: Config | None) -> Tensors:
            dout, offsets, n = inputs["dout"], inputs["offsets"], int(inputs["max_seq_len"])
            return {"dy": port.jagged_reduce_sum(dout, offsets, n, config=config)}

        return {"fwd": fwd, "bwd": bwd}

    def upstream_args(self, inputs: Tensors) -> tuple:
        x, y, offsets = inputs["x"], inputs["y"], inputs["offsets"]
        return int(inputs["max_seq_len"]), offsets, x, y


SPEC = JaggedDenseBroadcastAdd()
