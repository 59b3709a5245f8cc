"""add_position_embeddings (recsys-examples' Triton `triton_add_position_embeddings`, HSTU's
position encoder without time): each row n of sequence b of a jagged tensor, scaled, plus the
position embedding of min(n, high_inds[b]).

Shapes: x [sum_L, D] jagged (upstream: jagged), dense [K, D] the K position embeddings, high_inds
[B] (the position every later row clamps to: HSTU's length - num_targets, at most K - 1), a
scale (HSTU's sqrt(D)). out = x * scale + dense[min(n, high_inds[b])]. Backward as upstream's
autograd Function: dx = dout * scale (dout itself at scale 1), ddense[k] = the rows of dout whose
clamped position is k, summed; both from one kernel (`bwd`, one program per position k walking
the sequences, as upstream's). Upstream's inference form (`ind_offsets`: positions start at an
offset per sequence) is the forward's too; its backward refuses it, the port's as well.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .cases import total_rows
from .norm import fits_registers
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .position_embeddings import (
    UPSTREAM_FILE,
    UPSTREAM_SHA256,
    PositionEmbeddingsOp,
    fits,
    fwd_kernel,
    programs,
)
from .spec import Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "add_position_embeddings"

# (B, max_seq_len, D, K, lengths): B = 1, a single row, an empty sequence, a sequence longer than
# max_seq_len (the port alone: upstream leaves its rows past max_seq_len unwritten), positions
# past K (the clamp at K - 1), D not a power of two below and above upstream's 64-wide column
# block.
ACCURACY_SHAPES = (
    (1, 16, 16, 32, (16,)),
    (1, 8, 24, 8, (1,)),
    (4, 16, 20, 12, (0, 5, 16, 23)),
    (3, 40, 100, 64, (40, 0, 33)),
    (2, 24, 130, 16, (24, 7)),
)
# HSTU sizes: 10^5-10^6 rows of D 128-512, 8192 position buckets (HSTU's num_position_buckets).
PERFORMANCE_SHAPES = (
    (512, 1024, 256, 8192, "bfloat16"),
    (256, 4096, 128, 8192, "float16"),
    (1024, 512, 512, 8192, "float32"),
    (2048, 1024, 256, 8192, "bfloat16"),
)


def bwd_default(case: Case) -> Config:
    """Upstream's backward (not autotuned): one row a step, the whole row (BLOCK_D =
    next_pow2(D)), Triton's default 4 warps and 3 stages."""
    return {"BLOCK_N": 1, "BLOCK_D": next_pow2(case.shape["D"]), "num_warps": 4, "num_stages": 3}


def _bwd_grid(config: Config, case: Case) -> tuple[int]:
    """Upstream's grid (K,), here times D's column blocks, at most MAX_PROGRAMS programs."""
    return programs(case.shape["K"] * -(-case.shape["D"] // config["BLOCK_D"]))


def _fwd_tiles(config: Config, case: Case) -> int:
    """x's tile and the gathered dense tile, each in its dtype and in fp32, the positions."""
    e, bn, bd = case.torch_dtype.itemsize, config["BLOCK_N"], config["BLOCK_D"]
    return 2 * bn * bd * (e + 4) + 8 * bn


def _fwd_stream(config: Config, case: Case) -> int:
    return 2 * case.torch_dtype.itemsize * config["BLOCK_N"] * config["BLOCK_D"]


def _bwd_tiles(config: Config, case: Case) -> int:
    """dout's tile in its dtype and in fp32, its scaled copy, the fp32 accumulator row."""
    e, bn, bd = case.torch_dtype.itemsize, config["BLOCK_N"], config["BLOCK_D"]
    return bn * bd * (2 * e + 4) + 4 * bd


def _bwd_stream(config: Config, case: Case) -> int:
    return case.torch_dtype.itemsize * config["BLOCK_N"] * config["BLOCK_D"]


FWD = fwd_kernel(
    _fwd_tiles, _fwd_stream, "_add_position_fwd_kernel", "_add_position_embeddings_kernel"
)
BWD = KernelSpec(
    name="bwd",
    tunables=(
        Tunable("BLOCK_N", pow2_range(1, 64)),
        Tunable("BLOCK_D", pow2_range(16, 1024)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        Tunable("num_stages", (1, 2, 3), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("dx", "ddense"),
    default=bwd_default,
    grid=_bwd_grid,
    tile_bytes=_bwd_tiles,
    stream_bytes=_bwd_stream,
    constraints=(
        fits("BLOCK_N", "max_seq_len", bwd_default),
        fits("BLOCK_D", "D", bwd_default),
        fits_registers,
    ),
    port_kernel="_add_position_bwd_kernel",
    upstream_kernel="_add_position_embeddings_bwd_kernel",
)


def clamped_positions(offsets: torch.Tensor, high_inds: torch.Tensor) -> torch.Tensor:
    """Per jagged row, its position in its sequence clamped to the sequence's high_inds."""
    lengths = offsets[1:] - offsets[:-1]
    seq = torch.repeat_interleave(torch.arange(lengths.numel(), device=offsets.device), lengths)
    position = torch.arange(seq.numel(), device=offsets.device) - offsets[seq]
    return torch.minimum(position, high_inds[seq])


class AddPositionEmbeddings(PositionEmbeddingsOp):
    name = NAME
    summary = (
        "Jagged [sum_L, D] * scale plus position embeddings [K, D] of each row's clamped "
        "position; fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("triton_add_position_embeddings", "_AddPositionEmbeddingsFunction"),
        # From _add_position_embeddings_configs (58) to the entry (658-671); the timestamp
        # form's kernels lie between (the README names each piece's lines).
        lines="58-671",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("B", "max_seq_len", "D", "K")
    input_names = ("x", "offsets", "high_inds", "max_seq_len", "dense", "scale", "dout")
    output_names = ("out", "dx", "ddense")
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES
    upstream_function = "_AddPositionEmbeddingsFunction"
    upstream_grads = {"dx": 0, "ddense": 4}
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}
    kernels = (FWD, BWD)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        """x and dout normal, dense at half that scale; per sequence a number of targets drawn
        in [0, length] and high_inds = min(length - targets, K - 1) (HSTU's _get_high_inds);
        scale = sqrt(D) (HSTU's alpha)."""
        gen = self.generator(case, seed)
        d, k = case.shape["D"], case.shape["K"]
        rows = total_rows(case)
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "dense": 0.5 * torch.randn(k, d, generator=gen),
            "dout": torch.randn(rows, d, generator=gen),
        }
        lengths = torch.tensor(case.lengths, dtype=torch.int64)
        targets = (torch.rand(lengths.numel(), generator=gen) * (lengths + 1)).long()
        out = {name: t.to(case.torch_dtype).to(device) for name, t in tensors.items()}
        return {
            **out,
            **self.offsets(case, device),
            "high_inds": torch.clamp(lengths - targets, max=k - 1).to(device),
            "scale": torch.tensor(float(d) ** 0.5),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """out = x * scale + dense[p], dx = dout * scale, ddense[k] = the rows of dout at p = k
        summed, p a row's position clamped to its sequence's high_inds."""
        x, dense, dout = (inputs[k].to(compute_dtype) for k in ("x", "dense", "dout"))
        scale = float(inputs["scale"])
        positions = clamped_positions(inputs["offsets"], inputs["high_inds"])
        return {
            "out": x * scale + dense[positions],
            "dx": dout * scale,
            "ddense": torch.zeros_like(dense).index_add_(0, positions, dout),
        }

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """R rows of D. fwd: x read, a dense row gathered per row, out written; 2 R D flops.
        bwd: dout read, dx written (scale != 1), ddense (K rows) written; 2 R D flops."""
        d, k = case.shape["D"], case.shape["K"]
        r, size = total_rows(case), case.torch_dtype.itemsize
        if part == "fwd":
            return 3 * r * d * size, 2 * r * d
        return (2 * r + k) * d * size, 2 * r * d

    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        port = load_port(self.name)

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            out = port.add_position_embeddings_fwd(
                inputs["x"], inputs["offsets"], inputs["high_inds"], int(inputs["max_seq_len"]),
                inputs["dense"], float(inputs["scale"]), config=config,
            )  # fmt: skip
            return {"out": out}

        def bwd(inputs: Tensors, config: Config | None) -> Tensors:
            dx, ddense = port.add_position_embeddings_bwd(
                inputs["dout"], inputs["offsets"], inputs["high_inds"],
                int(inputs["max_seq_len"]), inputs["dense"].size(0), float(inputs["scale"]),
                config=config,
            )  # fmt: skip
            return {"dx": dx, "ddense": ddense}

        return {"fwd": fwd, "bwd": bwd}

    def upstream_args(self, inputs: Tensors) -> tuple:
        """_AddPositionEmbeddingsFunction.forward(jagged, jagged_offsets, high_inds, max_seq_len,
        dense, scale, ind_offsets)."""
        return (inputs["x"], inputs["offsets"], inputs["high_inds"], int(inputs["max_seq_len"]),
                inputs["dense"], float(inputs["scale"]), None)  # fmt: skip


SPEC = AddPositionEmbeddings()
