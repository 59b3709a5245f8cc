"""What jagged_to_padded_dense and dense_to_jagged share: shapes, cases, tunables, upstream file.

Both copy rows between a 2-D jagged tensor [sum_L, D] and a padded dense one [B, max_len, D];
their outputs are exact, so port and upstream must both match the golden bit for bit.
"""

from __future__ import annotations

import zlib
from abc import abstractmethod
from collections.abc import Callable

import torch

from .cases import case_offsets, standard_cases
from .npu_tunables import MULTIBUFFER
from .spec import (
    SHORT_DTYPE,
    BlockFits,
    Case,
    CaseKind,
    Config,
    OpSpec,
    Tensors,
    Upstream,
    next_pow2,
    pow2_range,
)
from .tunable import PROGRAMS, Role, Tunable

UPSTREAM_FILE = Upstream(
    file="triton/jagged/triton_jagged_tensor_ops.py",
    sha256="2b56cea5a12bab27cd3f93cc6b018da316a58d226b3325907ea85717cbb238a2",
    functions=(),
    lines="",
)
#: Upstream's thread_block_row_size and thread_block_col_size.
UPSTREAM_BLOCK = 32

# (B, max_len, D, lengths): B=1, empty sequences, sequences past max_len, D not a multiple of a block.
ACCURACY_SHAPES = (
    (1, 8, 16, (8,)),
    (4, 16, 40, (0, 5, 16, 23)),
    (6, 33, 7, (33, 0, 50, 1, 32, 0)),
)
PERFORMANCE_SHAPES = (
    (2048, 256, 64, "float16"),
    (1024, 1024, 128, "float32"),
    (2048, 512, 256, "bfloat16"),
    (512, 4096, 128, "bfloat16"),
)


def _tiles(config: Config, case: Case) -> int:
    return config["BLOCK_ROW"] * config["BLOCK_COL"] * case.torch_dtype.itemsize


def _grid(config: Config, case: Case) -> tuple[int]:
    """One program per (row block, sequence) tile, on one axis (the ports loop over tiles)."""
    return (max(1, -(-case.shape["max_seq_len"] // config["BLOCK_ROW"])) * case.shape["B"],)


COPY_KERNEL = dict(
    name="fwd",
    tunables=(
        Tunable("BLOCK_ROW", pow2_range(1, 128)),
        Tunable("BLOCK_COL", pow2_range(16, 512)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    default=lambda case: {"BLOCK_ROW": UPSTREAM_BLOCK, "BLOCK_COL": UPSTREAM_BLOCK, "num_warps": 4},
    grid=_grid,
    tile_bytes=_tiles,
    stream_bytes=_tiles,
    constraints=(
        BlockFits("BLOCK_COL", lambda c: max(16, next_pow2(c.shape["D"])), "D"),
        BlockFits("BLOCK_ROW", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
    ),
)


class JaggedCopyOp(OpSpec):
    """A 2-D jagged <-> padded dense copy; subclasses say which way."""

    shape_keys = ("B", "max_seq_len", "D")
    #: The one output's name.
    output: str

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def _generator(self, case: Case, seed: int) -> torch.Generator:
        return torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)

    def _common(self, case: Case, device: torch.device) -> Tensors:
        return {
            "offsets": case_offsets(case, device),
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
        }

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return (self.output,)

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        return self.launch("fwd", inputs, (configs or {}).get("fwd"))  # type: ignore[arg-type]

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        return lambda: self.run_port(inputs, configs)

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        return lambda: self.run_upstream(inputs, case)

    @abstractmethod
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors: ...
