"""group_norm_mul_dropout (recsys-examples' Triton `GroupNormMulDropoutFunction`): forward and
backward of y = dropout((GN(x) * weight[h] + bias[h]) * u) over each row of [N, H * D], the
GroupNorm of H heads of D elements each (HSTU's `group_norm=True` output norm).

Shapes in this project's names: N rows, H heads (upstream's num_heads), D elements a head
(upstream's linear_dim); weight and bias [H]; mean and rstd [N * H], one per (row, head), as
upstream stores them. Each (row, head) is normalised alone: the port treats the N * H head rows as
a LayerNorm's rows, BLOCK_N rows of all heads a tile, and draws upstream's dropout numbers,
`tl.rand(seed, (row * H + head) * D + col)`.

Ported: `concat_ux=False`, training and inference. Not ported: `concat_ux` and the backward's
`compute_y`. Upstream's dx kernel adds each row's weight gradients atomically into
min(N, GROUP_N) lock rows; the port's programs keep theirs in registers and store one partial row
of H a program (deterministic), which bwd_dw sums. bwd_dx's program count may also be 0:
upstream's launch, a program per row block, its sums added atomically into upstream's lock rows
(the order of the adds, so the sums' last bits, vary between runs), which only a GPU takes at
10^5-10^6 rows (an Ascend launch takes at most 65535 blocks).
"""

from __future__ import annotations

import dataclasses

import torch

from .norm import (
    EPS,
    MAX_NUM_PROGRAMS,
    MAX_TILE_PER_THREAD,
    ROW_TUNABLES,
    ROWS_FIT,
    rows_grid,
)
from .norm_mul_dropout import UPSTREAM_FILE, NormMulDropoutOp, dx_bytes, fwd_bytes
from .npu_tunables import MULTIBUFFER
from .spec import (
    BlockFits,
    Case,
    Config,
    KernelSpec,
    Tensors,
    canonical_dtype,
    next_pow2,
    pow2_range,
)
from .tunable import Role, Tunable

NAME = "group_norm_mul_dropout"

# (N, H, D): a single row, no rows, H and D not powers of two, D of one element, rows not a
# multiple of a row block, a row over 8192 elements (fp16 over 16 KiB; fp32 at 64 KiB, upstream's
# limit).
ACCURACY_SHAPES = ((1, 4, 32), (0, 2, 16), (37, 3, 40), (5, 4, 1), (130, 2, 24), (3, 2, 5000))
# HSTU sizes: 10^5-10^6 rows, 2-8 heads of 64-128 (rows of 256-1024 elements).
PERFORMANCE_SHAPES = (
    (131072, 4, 64, "bfloat16"),
    (262144, 8, 64, "float16"),
    (1048576, 2, 128, "float32"),
    (131072, 8, 128, "bfloat16"),
)


def block_h(case: Case) -> int:
    return next_pow2(case.shape["H"])


def block_d(case: Case) -> int:
    return next_pow2(case.shape["D"])


def tile(config: Config, case: Case) -> int:
    """Elements of a row kernel's tile: BLOCK_N rows of every head's whole block."""
    return config["BLOCK_N"] * block_h(case) * block_d(case)


def upstream_warps(case: Case) -> int:
    """Upstream's num_warps: min(max(BLOCK_D * BLOCK_H // 256, 1), 8)."""
    return min(max(block_h(case) * block_d(case) // 256, 1), 8)


def _fwd_default(case: Case) -> Config:
    """Upstream's forward: one row per program (grid (N,)), here at most MAX_NUM_PROGRAMS."""
    return {"BLOCK_N": 1, "NUM_PROGRAMS": MAX_NUM_PROGRAMS, "num_warps": upstream_warps(case)}


def _reduce_default(case: Case) -> Config:
    """Upstream's dw/db sum: one head a program (grid (H,)), the first config of its autotune
    list (BLOCK_N 32, 8 warps)."""
    return {"BLOCK_N": 32, "BLOCK_H": 1, "num_warps": 8}


def _reduce_grid(config: Config, case: Case) -> tuple[int]:
    return (-(-case.shape["H"] // config["BLOCK_H"]),)


def fits_registers(config: Config, case: Case, limits) -> str | None:
    """A tile of more fp32 elements than the threads can hold spills."""
    if "num_warps" not in config:
        return None
    elements = tile(config, case) if "NUM_PROGRAMS" in config else (
        config["BLOCK_N"] * config["BLOCK_H"]
    )  # fmt: skip
    threads = 32 * config["num_warps"]
    if elements > MAX_TILE_PER_THREAD * threads:
        return (
            f"a tile of {elements} elements over {threads} threads: more than "
            f"{MAX_TILE_PER_THREAD} per thread spills"
        )
    return None


def _fwd_tiles(config: Config, case: Case) -> int:
    # the tile; the weight, bias and statistics per head row in fp32
    size = case.torch_dtype.itemsize
    return fwd_bytes(tile(config, case), size) + 16 * config["BLOCK_N"] * block_h(case)


def _fwd_stream(config: Config, case: Case) -> int:
    return 2 * tile(config, case) * case.torch_dtype.itemsize


def _dx_tiles(config: Config, case: Case) -> int:
    # the tile; w, b, the statistics and the two gradient sums per head row in fp32
    size = case.torch_dtype.itemsize
    return dx_bytes(tile(config, case), size) + 32 * config["BLOCK_N"] * block_h(case)


def _dx_stream(config: Config, case: Case) -> int:
    return 3 * tile(config, case) * case.torch_dtype.itemsize


def _reduce_tiles(config: Config, case: Case) -> int:
    return 16 * config["BLOCK_N"] * config["BLOCK_H"]


def _reduce_stream(config: Config, case: Case) -> int:
    return 8 * config["BLOCK_N"] * config["BLOCK_H"]


def _heads(rows: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """[N, H * D] rows as [N, H, D] (H: the weight's elements)."""
    heads = weight.numel()
    return rows.view(rows.size(0), heads, rows.size(1) // heads)


#: BLOCK_N reaches 4096: the sum runs over a partial row per bwd_dx program (32768 at its
#: default), where upstream's runs over its 2048 lock rows; at 256 a row block the few programs
#: of the sum (one per BLOCK_H heads) took 0.07-0.09 ms on the H200, half upstream's whole backward.
REDUCE_TUNABLES = (
    Tunable("BLOCK_N", pow2_range(8, 4096)),
    Tunable("BLOCK_H", pow2_range(1, 64)),
    Tunable("num_warps", (1, 2, 4, 8, 16), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)
HEADS_FIT = BlockFits("BLOCK_H", block_h, "H")
_ROWS = dict(
    tunables=ROW_TUNABLES, grid=rows_grid, constraints=(ROWS_FIT, fits_registers),
    whole_keys=("H", "D"),
)  # fmt: skip
#: bwd_dx's: the row tunables, NUM_PROGRAMS also 0: upstream's launch, a program per row block,
#: each adding its weight sums atomically into upstream's lock rows (a partial row per program
#: would leave bwd_dw N / BLOCK_N rows: 0.25 ms to sum 10^6 on the H200, a fifth of the part).
DX_TUNABLES = tuple(
    dataclasses.replace(t, values=(*t.values, 0)) if t.name == "NUM_PROGRAMS" else t
    for t in ROW_TUNABLES
)


class GroupNormMulDropout(NormMulDropoutOp):
    name = NAME
    summary = (
        "dropout(GroupNorm(x) * u) of H heads of D per row of [N, H * D], weight and bias per "
        "head; fwd and bwd (dx, du, dw, db)"
    )
    upstream = dataclasses.replace(
        UPSTREAM_FILE,
        functions=(
            "triton_group_norm_mul_dropout_fwd",
            "triton_group_norm_mul_dropout_bwd",
            "GroupNormMulDropoutFunction",
        ),
        lines="600-1143",
    )
    upstream_function = "GroupNormMulDropoutFunction"
    shape_keys = ("N", "H", "D")
    kernels = (
        KernelSpec(
            name="fwd", outputs=("y",), default=_fwd_default, tile_bytes=_fwd_tiles,
            stream_bytes=_fwd_stream, port_kernel="_group_norm_mul_dropout_fwd_kernel",
            upstream_kernel="_group_norm_mul_dropout_fwd", **_ROWS,
        ),
        KernelSpec(
            name="bwd_dx", outputs=("dx", "du"), default=_fwd_default, tile_bytes=_dx_tiles,
            stream_bytes=_dx_stream, port_kernel="_group_norm_mul_dropout_bwd_dx_du_kernel",
            upstream_kernel="_group_norm_mul_dropout_bwd_dx_du", feeds="bwd_dw",
            **{**_ROWS, "tunables": DX_TUNABLES},
        ),
        KernelSpec(
            name="bwd_dw", tunables=REDUCE_TUNABLES, outputs=("dweight", "dbias"),
            default=_reduce_default, grid=_reduce_grid, tile_bytes=_reduce_tiles,
            stream_bytes=_reduce_stream, constraints=(HEADS_FIT, fits_registers),
            port_kernel="_group_norm_bwd_dwdb_kernel", upstream_kernel="_group_norm_bwd_dwdb",
        ),
    )  # fmt: skip

    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def _case_of(self, inputs: Tensors) -> Case:
        n, width = inputs["x"].shape
        heads = inputs["weight"].numel()
        shape = {"N": n, "H": heads, "D": width // heads}
        return self.make_case(shape, canonical_dtype(str(inputs["x"].dtype)[6:]))

    def row_width(self, case: Case) -> int:
        return case.shape["H"] * case.shape["D"]

    def affine_width(self, case: Case) -> int:
        return case.shape["H"]

    # -- the golden ------------------------------------------------------------------------------
    def torch_norm(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """F.group_norm over heads: the rows viewed as [N, heads, head width], a group a head."""
        heads = _heads(x, weight)
        normed = torch.nn.functional.group_norm(heads, weight.numel(), weight, bias, EPS)
        return normed.view_as(x)

    def normalize(self, x, weight, bias):
        heads = _heads(x, weight)
        mean = heads.mean(2).reshape(-1)
        rstd = torch.rsqrt(((heads - heads.mean(2, keepdim=True)) ** 2).mean(2) + EPS).reshape(-1)
        xhat = self.xhat(x, mean, rstd, weight)
        ln = xhat.view_as(heads) * weight[:, None] + bias[:, None]
        return ln.view_as(x), xhat, mean, rstd

    def xhat(self, x, mean, rstd, weight):
        shape = (x.size(0), weight.numel(), 1)
        return ((_heads(x, weight) - mean.view(shape)) * rstd.view(shape)).view_as(x)

    def norm_grads(self, grad, xhat, rstd, weight):
        g, xh = _heads(grad, weight), _heads(xhat, weight)
        wdy = weight[:, None] * g
        c1 = (xh * wdy).mean(2, keepdim=True)
        c2 = wdy.mean(2, keepdim=True)
        dx = (wdy - xh * c1 - c2) * rstd.view(grad.size(0), weight.numel(), 1)
        return dx.view_as(grad), (g * xh).sum(2), g.sum(2)

    # -- the port and upstream -------------------------------------------------------------------
    def dw_shape(self, inputs: Tensors) -> tuple[int, ...]:
        """(N, D): the rows and the head width, which with the heads name the case."""
        return inputs["x"].size(0), inputs["x"].size(1) // inputs["weight"].numel()

    def form(self, inputs: Tensors) -> dict[str, int]:
        heads = inputs["weight"].numel()
        return {"num_heads": heads, "linear_dim": inputs["x"].size(1) // heads}

    def upstream_args(self, inputs: Tensors) -> tuple:
        """GroupNormMulDropoutFunction.forward(x, u, weight, bias, eps, dropout_ratio, training,
        concat_ux, num_heads, linear_dim, seed)."""
        x, u, w, b = (inputs[k] for k in ("x", "u", "weight", "bias"))
        heads = w.numel()
        return (x, u, w, b, self.eps, self.dropout_ratio, self.training, False, heads,
                x.size(1) // heads, self.seed)  # fmt: skip


SPEC = GroupNormMulDropout()
