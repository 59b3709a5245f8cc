"""jagged_softmax: softmax over each jagged sequence, per column, forward and backward.

y[offsets[b] + l, d] = softmax_l(x[offsets[b] + l', d] for l' < n_b)[l] for l < n_b = min(len_b,
max_seq_len); rows past max_seq_len are zero (upstream's zero-initialised output), in y and dx.
"""

from __future__ import annotations

import types
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .cases import case_offsets, effective_lengths, standard_cases, total_rows
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
from .tunable import PROGRAMS, Role, Tunable

NAME = "jagged_softmax"
UPSTREAM_FILE = "sll/triton/triton_jagged_softmax.py"
UPSTREAM_SHA256 = "a1d37ae9718f73955698c677e05441b2876952d6e91082c3a4e80fb6908dad8e"
#: fp32 elements of a [BLOCK_L, BLOCK_D] tile one CUDA thread may hold before the kernel spills
#: (upstream's own default at max_seq_len 4096 holds 32 per thread).
MAX_TILE_PER_THREAD = 128

# (B, max_seq_len, D, lengths): B=1, empty sequences, sequences past max_seq_len, D and
# max_seq_len not powers of two; lengths 23, 33, 40, 50 take the kernels' row-block loop at small
# BLOCK_L.
ACCURACY_SHAPES = (
    (1, 8, 4, (8,)),
    (4, 16, 20, (0, 5, 16, 23)),
    (6, 33, 3, (33, 0, 50, 1, 40, 0)),
)
# Recommendation-sized: B up to 2048, max_seq_len 256-4096, D 64-256.
PERFORMANCE_SHAPES = (
    (2048, 256, 64, "float16"),
    (1024, 1024, 128, "float32"),
    (2048, 512, 256, "bfloat16"),
    (512, 4096, 64, "bfloat16"),
)


#: Flops per softmaxed element: fwd max, subtract, exp, sum, divide; bwd dy * y and its sum,
#: subtract, multiply.
SOFTMAX_FLOPS = {"fwd": 5, "bwd": 4}


def softmax_traffic(part: str, used: int, total: int, size: int) -> tuple[int, int]:
    """A softmax over `used` of a tensor's `total` elements (the rest of the output zeros).
    fwd: x (used) read, y (total) written. bwd: dy and y (used) read, dx (total) written."""
    reads = used if part == "fwd" else 2 * used
    return (reads + total) * size, SOFTMAX_FLOPS[part] * used


def upstream_block(max_seq_len: int) -> int:
    """Upstream's BLOCK_SIZE: the whole sequence in one tile, at least 8."""
    return max(next_pow2(max_seq_len), 8)


def _upstream_default(case: Case) -> Config:
    """Upstream's launch (both kernels): grid (B, D), one column per program (BLOCK_D = 1), the
    sequence in one tile, Triton's num_warps=4 (num_stages left at Triton's 3)."""
    return {"BLOCK_L": upstream_block(case.shape["max_seq_len"]), "BLOCK_D": 1, "num_warps": 4}


def _grid(config: Config, case: Case) -> tuple[int]:
    """One program per (sequence, column block) tile, on one axis (the port loops over tiles)."""
    return (case.shape["B"] * -(-case.shape["D"] // config["BLOCK_D"]),)


@dataclass(frozen=True)
class SoftmaxTiles:
    """Tile models of a softmax kernel whose program holds `length` x `width` elements: the
    vectors' length (BLOCK_L, BLOCK_N) times how many vectors it does at once (BLOCK_D, BLOCK_H)."""

    length: str
    width: str

    def elements(self, config: Config) -> int:
        return config[self.length] * config[self.width]

    def fwd_tiles(self, config: Config, case: Case) -> int:
        # x in its dtype, x and exp(x - m) in fp32, plus the fp32 max and sum vectors.
        return self.elements(config) * (case.torch_dtype.itemsize + 8) + 8 * config[self.width]

    def fwd_stream(self, config: Config, case: Case) -> int:
        return self.elements(config) * case.torch_dtype.itemsize

    def bwd_tiles(self, config: Config, case: Case) -> int:
        # dy and y in their dtype, dy, y and dx in fp32, plus the fp32 sum vector.
        return self.elements(config) * (2 * case.torch_dtype.itemsize + 12) + 4 * config[self.width]

    def bwd_stream(self, config: Config, case: Case) -> int:
        return 2 * self.elements(config) * case.torch_dtype.itemsize

    def fits_registers(self, config: Config, case: Case, limits) -> str | None:
        if "num_warps" not in config:
            return None
        threads = 32 * config["num_warps"]
        if self.elements(config) > MAX_TILE_PER_THREAD * threads:
            return (
                f"{self.length} x {self.width} = {self.elements(config)} elements over {threads} "
                f"threads: more than {MAX_TILE_PER_THREAD} per thread spills"
            )
        return None


TILES = SoftmaxTiles("BLOCK_L", "BLOCK_D")


L_FITS = BlockFits("BLOCK_L", lambda c: upstream_block(c.shape["max_seq_len"]), "max_seq_len")
D_FITS = BlockFits("BLOCK_D", lambda c: next_pow2(c.shape["D"]), "D")
TUNABLES = (
    Tunable("BLOCK_L", pow2_range(8, 4096)),
    Tunable("BLOCK_D", pow2_range(1, 256)),
    Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
    # Only the row-block loop (sequences longer than BLOCK_L) pipelines.
    Tunable("num_stages", (1, 2, 3, 4), role=Role.LAUNCH_OPTION, default=3),
    MULTIBUFFER,
    PROGRAMS,
)


class JaggedSoftmaxOp(OpSpec):
    name = NAME
    summary = (
        "Softmax over each jagged sequence (per column, truncated at max_seq_len); fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("jagged_softmax_", "JaggedSoftmax"),
        lines="14-197",
    )
    shape_keys = ("B", "max_seq_len", "D")
    input_names = ("x", "offsets", "max_seq_len", "dy")
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
            constraints=(L_FITS, D_FITS, TILES.fits_registers),
            port_kernel="_jagged_softmax_fwd_kernel",
            upstream_kernel="jagged_softmax_kernel",
        ),
        KernelSpec(
            name="bwd",
            tunables=TUNABLES,
            outputs=("dx",),
            default=_upstream_default,
            grid=_grid,
            tile_bytes=TILES.bwd_tiles,
            stream_bytes=TILES.bwd_stream,
            constraints=(L_FITS, D_FITS, TILES.fits_registers),
            port_kernel="_jagged_softmax_bwd_kernel",
            upstream_kernel="jagged_softmax_backward_kernel",
        ),
    )
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_{SHORT_DTYPE[dtype]}"
        return Case(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = case_offsets(case, torch.device("cpu"))
        rows, d = max(0, int(offsets[-1])), case.shape["D"]
        x = 2.0 * torch.randn(rows, d, generator=gen)
        dy = torch.randn(rows, d, generator=gen)
        return {
            "x": x.to(case.torch_dtype).to(device),
            "offsets": offsets.to(device),
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
            "dy": dy.to(case.torch_dtype).to(device),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x = inputs["x"].to(compute_dtype)
        dy = inputs["dy"].to(compute_dtype)
        offsets = inputs["offsets"].to(x.device)
        n = int(inputs["max_seq_len"])
        batch = offsets.numel() - 1
        lengths = offsets[1:] - offsets[:-1]
        seg = torch.repeat_interleave(torch.arange(batch, device=x.device), lengths)
        keep = ((torch.arange(x.size(0), device=x.device) - offsets[seg]) < n)[:, None]
        index = seg[:, None].expand_as(x)
        neg_inf = torch.full_like(x, float("-inf"))
        m = torch.full((batch, x.size(1)), float("-inf"), dtype=x.dtype, device=x.device)
        m = m.scatter_reduce(0, index, torch.where(keep, x, neg_inf), "amax")
        e = torch.where(keep, torch.exp(x - m[seg]), torch.zeros_like(x))
        s = torch.zeros_like(m).index_add(0, seg, e)
        y = torch.where(keep, e / s[seg], torch.zeros_like(x))
        dot = torch.zeros_like(m).index_add(0, seg, dy * y)
        dx = torch.where(keep, (dy - dot[seg]) * y, torch.zeros_like(x))
        return {"y": y, "dx": dx}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """softmax_traffic over the first min(len_b, max_seq_len) rows of each sequence, times D,
        of a [sum_L, D] tensor."""
        d = case.shape["D"]
        used, total = sum(effective_lengths(case)) * d, total_rows(case) * d
        return softmax_traffic(part, used, total, case.torch_dtype.itemsize)

    # -- the port ------------------------------------------------------------------------------
    @staticmethod
    def _args(inputs: Tensors):
        return inputs["x"], inputs["offsets"], int(inputs["max_seq_len"]), inputs["dy"]

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(NAME)
        x, offsets, n, dy = self._args(inputs)
        y = port.jagged_softmax_forward(x, offsets, n, config=configs.get("fwd"))
        dx = port.jagged_softmax_backward(dy, y, offsets, n, config=configs.get("bwd"))
        return {"y": y, "dx": dx}

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        if kernel == "fwd":
            return inputs
        x = inputs["x"]
        return {**inputs, "y": golden["y"].to(device=x.device, dtype=x.dtype)}

    def launch(self, kernel: str, inputs: Tensors, config: Config) -> Tensors:
        port = load_port(NAME)
        x, offsets, n, dy = self._args(inputs)
        if kernel == "fwd":
            return {"y": port.jagged_softmax_forward(x, offsets, n, config=config)}
        if kernel == "bwd":
            return {"dx": port.jagged_softmax_backward(dy, inputs["y"], offsets, n, config=config)}
        raise ValueError(f"unknown kernel {kernel!r}")

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(NAME)
        configs = configs or {}
        x, offsets, n, dy = self._args(inputs)
        if part == "fwd":
            return lambda: port.jagged_softmax_forward(x, offsets, n, config=configs.get("fwd"))
        y = port.jagged_softmax_forward(x, offsets, n, config=configs.get("fwd"))
        return lambda: port.jagged_softmax_backward(dy, y, offsets, n, config=configs.get("bwd"))

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return ("y", "dx")

    @staticmethod
    def _backward_ctx(y: torch.Tensor, offsets: torch.Tensor, n: int):
        """What upstream's JaggedSoftmax.forward leaves for its backward."""
        return types.SimpleNamespace(saved_tensors=(y, offsets), max_seq_len=n)

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self.upstream_module()
        x, offsets, n, dy = self._args(inputs)
        y = up.jagged_softmax_(x, offsets, n)
        dx = up.JaggedSoftmax.backward(self._backward_ctx(y, offsets, n), dy)[0]
        return {"y": y, "dx": dx}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        up = self.upstream_module()
        x, offsets, n, dy = self._args(inputs)
        if part == "fwd":
            return lambda: up.jagged_softmax_(x, offsets, n)
        ctx = self._backward_ctx(up.jagged_softmax_(x, offsets, n), offsets, n)
        return lambda: up.JaggedSoftmax.backward(ctx, dy)


SPEC = JaggedSoftmaxOp()
