"""jagged2_softmax: softmax inside per-sample square matrices, forward and backward.

Sample b is an L_b x L_b row-major matrix at offsets_total[b] of a 1-D tensor. With
n_b = min(L_b, max_seq_len), the top-left n_b x n_b block gets a softmax over its rows for each
column (`transpose`, shape key dim=1) or over its columns for each row (dim=2); the rest is zero.
"""

from __future__ import annotations

import types
import zlib
from collections.abc import Callable

import torch

from .cases import effective_lengths, standard_cases
from .jagged import offsets_from_lengths
from .jagged_softmax import (
    UPSTREAM_FILE,
    UPSTREAM_SHA256,
    SoftmaxTiles,
    softmax_traffic,
)
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

NAME = "jagged2_softmax"

# (B, max_seq_len, dim, lengths): B=1, empty samples, samples past max_seq_len (truncated to the
# top-left block), max_seq_len not a power of two, both softmax axes; lengths 23 and 31 take the
# kernels' block loop at small BLOCK_N.
ACCURACY_SHAPES = (
    (1, 8, 1, (8,)),
    (4, 16, 2, (0, 5, 16, 23)),
    (5, 20, 1, (20, 0, 31, 1, 9)),
    (3, 12, 2, (12, 17, 0)),
)
# Recommendation-sized: B 512-2048, max_seq_len 256-1024 (a sample holds L_b^2 elements: about
# 0.31 * max_seq_len^2 on average with the skewed lengths).
PERFORMANCE_SHAPES = (
    (2048, 256, 1, "float16"),
    (1024, 512, 2, "float32"),
    (512, 1024, 1, "bfloat16"),
    (1024, 512, 2, "bfloat16"),
)


def upstream_block(max_seq_len: int) -> int:
    return max(next_pow2(max_seq_len), 8)


def _upstream_default(case: Case) -> Config:
    """Upstream's launch (both kernels): grid (B, max_seq_len), one softmax vector per program
    (BLOCK_H = 1), the vector in one tile, Triton's num_warps=4 (num_stages left at Triton's 3)."""
    return {"BLOCK_N": upstream_block(case.shape["max_seq_len"]), "BLOCK_H": 1, "num_warps": 4}


def _grid(config: Config, case: Case) -> tuple[int, int]:
    return case.shape["B"], -(-case.shape["max_seq_len"] // config["BLOCK_H"])


TILES = SoftmaxTiles("BLOCK_N", "BLOCK_H")


N_FITS = BlockFits("BLOCK_N", lambda c: upstream_block(c.shape["max_seq_len"]), "max_seq_len")
H_FITS = BlockFits("BLOCK_H", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len")
TUNABLES = (
    Tunable("BLOCK_N", pow2_range(8, 4096)),
    Tunable("BLOCK_H", pow2_range(1, 256)),
    Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
    # Only the block loop (vectors longer than BLOCK_N) pipelines.
    Tunable("num_stages", (1, 2, 3, 4), role=Role.LAUNCH_OPTION, default=3),
    MULTIBUFFER,
)


class Jagged2SoftmaxOp(OpSpec):
    name = NAME
    summary = (
        "Softmax per column or per row of per-sample square jagged matrices (truncated at "
        "max_seq_len); fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("jagged2_softmax", "Jagged2Softmax"),
        lines="200-463",
    )
    shape_keys = ("B", "max_seq_len", "dim")
    input_names = ("x", "offsets", "offsets_total", "max_seq_len", "transpose", "dy")
    output_names = ("y", "dx")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=TUNABLES,
            outputs=("y",),
            default=_upstream_default,
            grid=_grid,
            tile_bytes=TILES.fwd_tiles,
            stream_bytes=TILES.fwd_stream,
            constraints=(N_FITS, H_FITS, TILES.fits_registers),
            port_kernel="_jagged2_softmax_fwd_kernel",
            upstream_kernel="jagged_2_softmax_kernel",
        ),
        KernelSpec(
            name="bwd",
            tunables=TUNABLES,
            outputs=("dx",),
            default=_upstream_default,
            grid=_grid,
            tile_bytes=TILES.bwd_tiles,
            stream_bytes=TILES.bwd_stream,
            constraints=(N_FITS, H_FITS, TILES.fits_registers),
            port_kernel="_jagged2_softmax_bwd_kernel",
            upstream_kernel="jagged_2_softmax_backward_kernel",
        ),
    )
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}

    def jagged_rows(self, case: Case) -> int:
        """An L x L block per sequence: the values hold the sum of the squared lengths."""
        return sum(length * length for length in case.lengths)

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, dim = (shape[k] for k in self.shape_keys)
        if dim not in (1, 2):
            raise ValueError(f"dim must be 1 (softmax per column, transpose) or 2, not {dim}")
        name = f"b{b}_n{n}_dim{dim}_{SHORT_DTYPE[dtype]}"
        return Case(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        if case.offsets is not None:
            offsets = torch.tensor(case.offsets, dtype=torch.int64)
            lengths = (offsets[1:] - offsets[:-1]).clamp(min=0)
            total = offsets_from_lengths((lengths * lengths).tolist(), torch.device("cpu"))
        else:
            offsets = offsets_from_lengths(case.lengths, torch.device("cpu"))
            total = offsets_from_lengths([n * n for n in case.lengths], torch.device("cpu"))
        elements = int(total[-1])
        x = 2.0 * torch.randn(elements, generator=gen)
        dy = torch.randn(elements, generator=gen)
        return {
            "x": x.to(case.torch_dtype).to(device),
            "offsets": offsets.to(device),
            "offsets_total": total.to(device),
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
            "transpose": torch.tensor(case.shape["dim"] == 1),
            "dy": dy.to(case.torch_dtype).to(device),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x = inputs["x"].to(compute_dtype)
        dy = inputs["dy"].to(compute_dtype)
        n_max = int(inputs["max_seq_len"])
        axis = 0 if bool(inputs["transpose"]) else 1  # of one sample's [L, L] matrix
        y, dx = torch.zeros_like(x), torch.zeros_like(x)
        offsets, total = inputs["offsets"].tolist(), inputs["offsets_total"].tolist()
        for b in range(len(offsets) - 1):
            length, begin = offsets[b + 1] - offsets[b], total[b]
            n = min(length, n_max)
            if n == 0:
                continue
            span = slice(begin, begin + length * length)
            block = x[span].view(length, length)[:n, :n]
            yb = torch.softmax(block, dim=axis)
            gb = dy[span].view(length, length)[:n, :n]
            y[span].view(length, length)[:n, :n] = yb
            dx[span].view(length, length)[:n, :n] = (gb - (gb * yb).sum(axis, keepdim=True)) * yb
        return {"y": y, "dx": dx}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """softmax_traffic over the n_b x n_b blocks (n_b = min(L_b, max_seq_len)) of a tensor of
        sum_b L_b^2 elements."""
        used = sum(n * n for n in effective_lengths(case))
        total = sum(max(length, 0) ** 2 for length in case.lengths)
        return softmax_traffic(part, used, total, case.torch_dtype.itemsize)

    # -- the port ------------------------------------------------------------------------------
    @staticmethod
    def _args(inputs: Tensors):
        return (
            inputs["x"],
            inputs["offsets"],
            inputs["offsets_total"],
            int(inputs["max_seq_len"]),
            bool(inputs["transpose"]),
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(NAME)
        x, offsets, total, n, transpose = self._args(inputs)
        y = port.jagged2_softmax_forward(x, offsets, total, n, transpose, config=configs.get("fwd"))
        dx = port.jagged2_softmax_backward(
            inputs["dy"], y, offsets, total, n, transpose, config=configs.get("bwd")
        )
        return {"y": y, "dx": dx}

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        if kernel == "fwd":
            return inputs
        x = inputs["x"]
        return {**inputs, "y": golden["y"].to(device=x.device, dtype=x.dtype)}

    def launch(self, kernel: str, inputs: Tensors, config: Config) -> Tensors:
        port = load_port(NAME)
        x, offsets, total, n, transpose = self._args(inputs)
        if kernel == "fwd":
            return {
                "y": port.jagged2_softmax_forward(x, offsets, total, n, transpose, config=config)
            }
        if kernel == "bwd":
            dx = port.jagged2_softmax_backward(
                inputs["dy"], inputs["y"], offsets, total, n, transpose, config=config
            )
            return {"dx": dx}
        raise ValueError(f"unknown kernel {kernel!r}")

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(NAME)
        configs = configs or {}
        x, offsets, total, n, transpose = self._args(inputs)
        fwd = configs.get("fwd")
        if part == "fwd":
            return lambda: port.jagged2_softmax_forward(x, offsets, total, n, transpose, config=fwd)
        y = port.jagged2_softmax_forward(x, offsets, total, n, transpose, config=fwd)
        dy, bwd = inputs["dy"], configs.get("bwd")
        return lambda: port.jagged2_softmax_backward(
            dy, y, offsets, total, n, transpose, config=bwd
        )

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return ("y", "dx")

    @staticmethod
    def _ctx(y, offsets, total, n, transpose):
        """What upstream's Jagged2Softmax.forward leaves for its backward."""
        return types.SimpleNamespace(
            saved_tensors=(y, total, offsets, offsets),
            max_seq_len_row=n,
            max_seq_len_head=n,
            transpose=transpose,
        )

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self.upstream_module()
        x, offsets, total, n, transpose = self._args(inputs)
        y = up.jagged2_softmax(x, offsets, total, n, transpose)
        dx = up.Jagged2Softmax.backward(self._ctx(y, offsets, total, n, transpose), inputs["dy"])
        return {"y": y.detach(), "dx": dx[0]}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        up = self.upstream_module()
        x, offsets, total, n, transpose = self._args(inputs)
        if part == "fwd":
            return lambda: up.jagged2_softmax(x, offsets, total, n, transpose)
        y = up.jagged2_softmax(x, offsets, total, n, transpose).detach()
        ctx, dy = self._ctx(y, offsets, total, n, transpose), inputs["dy"]
        return lambda: up.Jagged2Softmax.backward(ctx, dy)


SPEC = Jagged2SoftmaxOp()
