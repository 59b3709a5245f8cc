"""jagged_dense_elementwise_mul_jagged_out (FBGEMM SLL): a jagged2 tensor times a dense [N, N] one.

x holds per sequence b a row-major L_b x L_b block at offsets[b] (offsets = cumsum of L_b^2).
With Lt = min(L_b, max_seq_len), upstream's kernel addresses that block with row stride Lt:
out[offsets[b] + r * Lt + c] = x[offsets[b] + r * Lt + c] * y[r, c] for r, c < Lt, and the rest
of the sequence's segment is 0. Backward: dx = the same product of dout and y (y gets no grad).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import load

from .cases import case_offsets, effective_lengths, standard_cases
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import (
    SHORT_DTYPE,
    BlockFits,
    Case,
    CaseKind,
    Config,
    KernelSpec,
    OpSpec,
    Tensors,
    Upstream,
    next_pow2,
    pow2_range,
)
from .tunable import Role, Tunable

NAME = "jagged_dense_elementwise_mul_jagged_out"

# (B, max_seq_len, lengths): B=1, empty sequences, sequences past max_seq_len (truncated to
# max_seq_len^2 products, the rest of the segment zero), max_seq_len not a multiple of a block.
ACCURACY_SHAPES = (
    (1, 8, (8,)),
    (4, 16, (0, 5, 16, 23)),
    (5, 20, (20, 0, 27, 1, 13)),
)
# Recommendation-sized: the jagged2 tensor holds sum_b L_b^2 elements (10M-45M here).
PERFORMANCE_SHAPES = (
    (2048, 128, "float16"),
    (1024, 256, "float32"),
    (512, 512, "bfloat16"),
    (128, 1024, "bfloat16"),
)
UPSTREAM_BLOCK = 32  # upstream's BLOCK_M = BLOCK_N


def _tiles(config: Config, case: Case) -> int:
    """x and y tiles in the dtype, their fp32 product, the output tile in the dtype."""
    return config["BLOCK_M"] * config["BLOCK_N"] * (3 * case.torch_dtype.itemsize + 4)


def _stream(config: Config, case: Case) -> int:
    return 2 * config["BLOCK_M"] * config["BLOCK_N"] * case.torch_dtype.itemsize


def _grid(config: Config, case: Case) -> tuple[int, int]:
    return max(1, -(-case.shape["max_seq_len"] // config["BLOCK_M"])), case.shape["B"]


def jagged2_segments(
    lengths: torch.Tensor, offsets: torch.Tensor, max_len: int
) -> list[tuple[int, int, int]]:
    """(begin, end, Lt) of every sequence, on the host."""
    lt = lengths.clamp(max=max_len).tolist()
    bounds = offsets.tolist()
    return [(bounds[i], bounds[i + 1], lt[i]) for i in range(len(lt))]


class Jagged2Op(OpSpec):
    """Ops on jagged2 tensors (per sequence an L_b x L_b block, offsets = cumsum of L_b^2):
    shapes (B, max_seq_len), cases and user-given offsets."""

    shape_keys = ("B", "max_seq_len")

    def jagged_rows(self, case: Case) -> int:
        """An L x L block per sequence: the values hold the sum of the squared lengths."""
        return sum(length * length for length in case.lengths)

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def case_from_shape(self, shape, dtype, offsets):
        """`--offsets` are offsets of the jagged2 tensor (cumsum of L_b^2); lengths are their roots."""
        case = super().case_from_shape(shape, dtype, None)
        if offsets is None:
            return case
        if len(offsets) != case.shape["B"] + 1:
            raise ValueError(f"{len(offsets)} offsets given; B={case.shape['B']} needs B + 1")
        sizes = [b - a for a, b in zip(offsets, offsets[1:], strict=False)]
        lengths = tuple(int(max(s, 0) ** 0.5) for s in sizes)
        return self.make_case(case.shape, case.dtype, lengths, "accuracy", tuple(offsets))

    @staticmethod
    def jagged2_offsets(case: Case) -> torch.Tensor:
        """The case's offsets (CPU): user-given ones verbatim, else the cumsum of L_b^2."""
        if case.offsets is not None:
            return case_offsets(case, torch.device("cpu"))
        lengths = torch.tensor(case.lengths, dtype=torch.int64)
        offsets = torch.zeros(len(case.lengths) + 1, dtype=torch.int64)
        offsets[1:] = torch.cumsum(lengths * lengths, 0)
        return offsets

    @staticmethod
    def jagged2_elements(case: Case) -> int:
        """Elements of the whole jagged2 tensor: sum_b L_b^2 (its segments, truncated or not)."""
        if case.offsets is not None:
            return max(0, case.offsets[-1])
        return sum(length * length for length in case.lengths)

    @staticmethod
    def jagged2_used(case: Case) -> int:
        """Elements an op truncating at max_seq_len uses: sum_b Lt_b^2, Lt_b = min(L_b, N)."""
        return sum(lt * lt for lt in effective_lengths(case))


class JaggedDenseElementwiseMulJaggedOut(Jagged2Op):
    name = NAME
    summary = "Multiply a jagged2 tensor by a dense [N, N] one, jagged output; forward and backward"
    upstream = Upstream(
        file="sll/triton/triton_jagged_dense_elementwise_mul_jagged_out.py",
        sha256="f51ec138e7bc4898a4a353e06e2b87945c8f2ad19a682152959d516844322021",
        functions=("jagged_dense_elementwise_mul_jagged_out",),
        lines="14-175",
    )
    input_names = ("x", "y", "seq_lengths", "offsets", "max_seq_len", "dout")
    output_names = ("out", "dx")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=(
                Tunable("BLOCK_M", pow2_range(1, 128)),
                Tunable("BLOCK_N", pow2_range(16, 256)),
                Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
                MULTIBUFFER,
            ),
            outputs=("out",),
            default=lambda case: {
                "BLOCK_M": UPSTREAM_BLOCK,
                "BLOCK_N": UPSTREAM_BLOCK,
                "num_warps": 4,
            },
            grid=_grid,
            tile_bytes=_tiles,
            stream_bytes=_stream,
            constraints=(
                BlockFits("BLOCK_M", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
                BlockFits(
                    "BLOCK_N", lambda c: max(16, next_pow2(c.shape["max_seq_len"])), "max_seq_len"
                ),
            ),
            port_kernel="_jagged_dense_mul_kernel",
            upstream_kernel="jagged_dense_elementwise_mul_jagged_out_kernel",
        ),
    )
    # The backward is the forward kernel on dout (upstream's JaggedDenseElementwiseMul.backward).
    parts = {"fwd": ("fwd",), "bwd": ("fwd",)}

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        n = case.shape["max_seq_len"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        lengths = torch.tensor(case.lengths, dtype=torch.int64)
        offsets = self.jagged2_offsets(case)
        total = max(0, int(offsets[-1]))
        tensors = {
            "x": torch.randn(total, generator=gen),
            "y": torch.randn(n, n, generator=gen),
            "dout": torch.randn(total, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        out["seq_lengths"] = lengths.to(device)
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(n)
        return out

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n = int(inputs["max_seq_len"])
        y = inputs["y"].to(compute_dtype)
        result = {}
        for src, dst in (("x", "out"), ("dout", "dx")):
            x = inputs[src].to(compute_dtype)
            out = torch.zeros_like(x)
            for begin, _, lt in jagged2_segments(inputs["seq_lengths"], inputs["offsets"], n):
                block = x[begin : begin + lt * lt].reshape(lt, lt)
                out[begin : begin + lt * lt] = (block * y[:lt, :lt]).reshape(-1)
            result[dst] = out
        return result

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """One product (fwd: x * y, bwd: dout * y, the same kernel): U = sum_b Lt_b^2 elements of
        the jagged2 source read, y[:max Lt, :max Lt] read, the whole jagged2 output (sum_b L_b^2,
        segment tails as zeros) written; U multiplies."""
        used = self.jagged2_used(case)
        y = max(effective_lengths(case), default=0) ** 2
        moved = (used + y + self.jagged2_elements(case)) * case.torch_dtype.itemsize
        return moved, used

    # -- the port ------------------------------------------------------------------------------
    def _mul(self, inputs: Tensors, source: str, config: Config | None):
        port = load_port(NAME)
        return port.jagged_dense_elementwise_mul_jagged_out_fwd(
            inputs[source],
            inputs["y"],
            inputs["seq_lengths"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
            config=config,
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        config = (configs or {}).get("fwd")
        return {"out": self._mul(inputs, "x", config), "dx": self._mul(inputs, "dout", config)}

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel != "fwd":
            raise ValueError(f"unknown kernel {kernel!r}")
        return {"out": self._mul(inputs, "x", config)}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        config = (configs or {}).get("fwd")
        source = "x" if part == "fwd" else "dout"
        return lambda: self._mul(inputs, source, config)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return ("out", "dx")

    def _upstream_mul(self, inputs: Tensors, source: str):
        up = load(self.upstream.file, self.upstream.sha256)
        return up.triton_jagged_dense_elementwise_mul_jagged_out(
            inputs[source],
            inputs["y"],
            inputs["seq_lengths"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
        )

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        # forward: JaggedDenseElementwiseMul.forward; dx: its backward, the same kernel on dout.
        return {"out": self._upstream_mul(inputs, "x"), "dx": self._upstream_mul(inputs, "dout")}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        source = "x" if part == "fwd" else "dout"
        return lambda: self._upstream_mul(inputs, source)


SPEC = JaggedDenseElementwiseMulJaggedOut()
