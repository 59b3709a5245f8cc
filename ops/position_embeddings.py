"""What the two position encoders of recsys-examples' `triton_position.py` share
(add_position_embeddings, add_timestamp_position_embeddings): the upstream file; cases named by
their shape's letters, lengths within max_seq_len; the forward kernel's tunables, default and grid
(a program per BLOCK_N rows of a sequence and BLOCK_D columns, both forwards autotuned over
upstream's `_add_position_embeddings_configs`); blocks no larger than what they tile.
"""

from __future__ import annotations

from collections.abc import Callable

from .jagged_dense_bmm_broadcast_add import MAX_PROGRAMS, RecsysJaggedOp
from .norm import fits_registers
from .npu_tunables import MULTIBUFFER
from .spec import SHORT_DTYPE, BlockFits, Case, Config, KernelSpec, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

UPSTREAM_FILE = "examples/hstu/ops/triton_ops/triton_position.py"
UPSTREAM_SHA256 = "015fb4a0745bdff9cb6850d4dbca2245ef502c8dbb0ad2ae839451c21a9a8386"
#: Shape key -> the letter of case names (b512_n1024_d256_k8192_bf16).
_LETTERS = {"B": "b", "max_seq_len": "n", "D": "d", "K": "k", "C": "c"}


def upstream_block_d(case: Case) -> int:
    """Upstream's forward BLOCK_D: next_pow2(D) below 64, else 64."""
    d = case.shape["D"]
    return next_pow2(d) if d < 64 else 64


def fwd_default(case: Case) -> Config:
    """The first config of upstream's `_add_position_embeddings_configs` (BLOCK_N 16, one stage,
    2 warps; its autotuner's pick among the 18 is a timing on the GPU) and its BLOCK_D."""
    return {"BLOCK_N": 16, "BLOCK_D": upstream_block_d(case), "num_warps": 2, "num_stages": 1}


def fits(tunable: str, key: str, default: Callable[[Case], Config]) -> BlockFits:
    """A block larger than its dimension padded only moves padding (upstream's default stays
    allowed)."""
    return BlockFits(tunable, lambda c: max(next_pow2(c.shape[key]), default(c)[tunable]), key)


def programs(blocks: int) -> tuple[int]:
    """A one-axis grid over `blocks` tiles, at most MAX_PROGRAMS programs (each walks the rest)."""
    return (max(1, min(MAX_PROGRAMS, blocks)),)


def _fwd_grid(config: Config, case: Case) -> tuple[int]:
    """Upstream's grid (B, max_seq_len's row blocks) as one axis."""
    return programs(case.shape["B"] * -(-max(case.shape["max_seq_len"], 1) // config["BLOCK_N"]))


def fwd_kernel(
    tile_bytes: Callable[[Config, Case], int],
    stream_bytes: Callable[[Config, Case], int],
    port_kernel: str,
    upstream_kernel: str,
) -> KernelSpec:
    """The forward: what differs between the two is what a tile holds and the kernels' names."""
    return KernelSpec(
        name="fwd",
        tunables=(
            Tunable("BLOCK_N", pow2_range(1, 128)),
            Tunable("BLOCK_D", pow2_range(1, 512)),
            Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION),
            Tunable("num_stages", (1, 2), role=Role.LAUNCH_OPTION),
            MULTIBUFFER,
            PROGRAMS,
        ),
        outputs=("out",),
        default=fwd_default,
        grid=_fwd_grid,
        tile_bytes=tile_bytes,
        stream_bytes=stream_bytes,
        constraints=(
            fits("BLOCK_N", "max_seq_len", fwd_default),
            fits("BLOCK_D", "D", fwd_default),
            fits_registers,
        ),
        port_kernel=port_kernel,
        upstream_kernel=upstream_kernel,
    )


class PositionEmbeddingsOp(RecsysJaggedOp):
    """A position encoder of `triton_position.py`: RecsysJaggedOp's cases, named by `_LETTERS`."""

    def make_case(self, shape, dtype, lengths, kind="accuracy", offsets=None) -> Case:
        name = "_".join(f"{_LETTERS[k]}{shape[k]}" for k in self.shape_keys)
        ordered = {k: shape[k] for k in self.shape_keys}
        return Case(self.name, f"{name}_{SHORT_DTYPE[dtype]}", ordered, dtype, tuple(lengths),
                    kind, offsets)  # fmt: skip
