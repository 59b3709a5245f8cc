"""addmm (recsys-examples' Triton `triton_addmm`, the linear layers of HSTU): z = x @ w + bias
over the rows of x, and y = silu(z); forward (a Triton tl.dot kernel) and backward (torch, as
upstream's).

Shapes in this project's names: x [N, D] (N rows of D features), w [D, T], bias [T] broadcast
over the rows, z and y [N, T]; upstream calls them M, K and N. The op runs upstream's SiLU form,
`triton_addmm(bias, x, w, silu=True)`: its forward kernel stores both z (upstream's output
without SiLU, and what its backward reads) and silu(z), so one tuned kernel covers both forms
(the port's silu=False is that kernel with the SiLU store compiled out). The backward is torch,
upstream's too: dz = silu'(z) dy, dx = dz w^T, dw = x^T dz, dbias = sum of dz over the rows;
only the forward is tuned.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .dense_rows import DenseRowsOp
from .jagged_dense_bmm import _accumulator_registers
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, Dot, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import Role, Tunable

NAME = "addmm"
#: Programs of a launch at most: up to this many tiles, upstream's one tile per program; beyond,
#: each walks the output tiles pid, pid + programs, ... (an Ascend launch over 65535 blocks fails).
MAX_PROGRAMS = 32768

# (N, D, T): a single row, no rows, D and T not powers of two, rows not a multiple of a row
# block, D of one element and T of three, D over several K blocks.
ACCURACY_SHAPES = ((1, 64, 32), (0, 32, 16), (37, 100, 72), (130, 48, 40), (5, 1, 3), (3, 300, 17))
# HSTU sizes: 10^5-10^6 rows, D and T 256-1024 (embedding widths and their projections).
PERFORMANCE_SHAPES = (
    (131072, 512, 512, "bfloat16"),
    (262144, 256, 1024, "float16"),
    (131072, 1024, 256, "float32"),
    (1048576, 256, 256, "bfloat16"),
)

TUNABLES = (
    Tunable("BLOCK_M", pow2_range(16, 256)),
    Tunable("BLOCK_N", pow2_range(16, 256)),
    Tunable("BLOCK_K", pow2_range(16, 128)),
    # row-major tile order, or upstream's grouping of 8 (its only value)
    Tunable("GROUP_M", (1, 8), role=Role.LAUNCHER_ARGUMENT),
    Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION),
    Tunable("num_stages", (2, 3, 4, 5), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)


def default(case: Case) -> Config:
    """Upstream's first autotune config (`get_mm_configs`, the CUDA list). Which of its eight
    configs upstream's autotuner keeps for (N, K) is a timing on the GPU, not a rule."""
    return {
        "BLOCK_M": 32,
        "BLOCK_N": 64,
        "BLOCK_K": 32,
        "GROUP_M": 8,
        "num_warps": 2,
        "num_stages": 5,
    }


def tiles(config: Config, case: Case) -> int:
    """Output tiles: row blocks of N times column blocks of T."""
    rows = -(-case.shape["N"] // config["BLOCK_M"])
    return rows * -(-case.shape["T"] // config["BLOCK_N"])


def _grid(config: Config, case: Case) -> tuple[int]:
    return (max(1, min(MAX_PROGRAMS, tiles(config, case))),)


def _tile_bytes(config: Config, case: Case) -> int:
    bm, bn, bk, e = (config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"],
                     case.torch_dtype.itemsize)  # fmt: skip
    # x and w tiles in the input dtype (`cube_resident` takes them out again); the vector code's
    # z + bias, silu(z) and their casts at 4 B per element of the tile, a bound from below: the
    # compiler splits them between the two vector cores that share the cube (a mix kernel runs
    # one cube and two vector cores) and reuses buffers, planning 4-6 B per element for the
    # 910B (98688 B for 256 x 64, 132608 B for 128 x 256: the compile matrix,
    # docs/benchmarks.md); the bias row in fp32.
    return e * (bm * bk + bk * bn) + 4 * bm * bn + 4 * bn


def _stream_bytes(config: Config, case: Case) -> int:
    return case.torch_dtype.itemsize * (
        config["BLOCK_M"] * config["BLOCK_K"] + config["BLOCK_K"] * config["BLOCK_N"]
    )


def _dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """acc += x_tile @ w_tile over the K loop, both operands loaded for the dot; the result goes
    to the vector code (bias, SiLU, casts), so it is not stored from L0C."""
    e = case.torch_dtype.itemsize
    return (Dot(config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"], e),)


def _fits(tunable: str, key: str) -> BlockFits:
    """A block over its dimension padded (>= 16, tl.dot's least) only computes padding;
    upstream's own default stays allowed (BLOCK_K 32 over D = 1)."""
    return BlockFits(tunable, lambda c: max(16, next_pow2(c.shape[key]), default(c)[tunable]), key)


FWD = KernelSpec(
    name="fwd",
    tunables=TUNABLES,
    outputs=("z", "y"),
    default=default,
    grid=_grid,
    tile_bytes=_tile_bytes,
    stream_bytes=_stream_bytes,
    constraints=(
        _fits("BLOCK_M", "N"),
        _fits("BLOCK_N", "T"),
        _fits("BLOCK_K", "D"),
        _accumulator_registers,
    ),
    dots=_dots,
    port_kernel="_addmm_fwd_kernel",
    upstream_kernel="_addmm_optional_silu_fwd",
)


class Addmm(DenseRowsOp):
    name = NAME
    summary = "z = x [N, D] @ w [D, T] + bias [T], y = silu(z); fwd (Triton) and bwd (torch)"
    upstream = Upstream(
        file="examples/hstu/ops/triton_ops/triton_addmm.py",
        sha256="027c84a06ef982bf1b0e87fc6566ba72c218558020f7d2b5a6235e79bf27342a",
        functions=("triton_addmm", "triton_addmm_silu_fwd", "triton_addmm_silu_bwd"),
        lines="47-414",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("N", "D", "T")
    input_names = ("x", "weight", "bias", "dy")
    output_names = ("z", "y", "dx", "dweight", "dbias")
    kernels = (FWD,)
    #: The backward is torch (upstream's is): nothing there to tune or to time against upstream.
    parts = {"fwd": ("fwd",)}

    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        n, d, t = (case.shape[k] for k in self.shape_keys)
        tensors = {
            "x": torch.randn(n, d, generator=gen),
            "weight": torch.randn(d, t, generator=gen) / d**0.5,  # z of about unit scale
            "bias": 0.5 * torch.randn(t, generator=gen),
            "dy": torch.randn(n, t, generator=gen),
        }
        return {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}

    def torch_forward(self, inputs: Tensors) -> Tensors:
        z = torch.addmm(inputs["bias"], inputs["x"], inputs["weight"])
        return {"z": z, "y": torch.nn.functional.silu(z)}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, w, b, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        z = x @ w + b
        s = torch.sigmoid(z)
        dz = dy * s * (1 + z * (1 - s))
        return {
            "z": z,
            "y": z * s,
            "dx": dz @ w.T,
            "dweight": x.T @ dz,
            "dbias": dz.sum(0),
        }

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """fwd: x, w and the bias read, z and y written; 2 N D T flops of the dot (the bias and
        SiLU, a few per output element, are small beside it)."""
        n, d, t = (case.shape[k] for k in self.shape_keys)
        size = case.torch_dtype.itemsize
        return (n * d + d * t + t + 2 * n * t) * size, 2 * n * d * t

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel != "fwd":
            raise ValueError(f"unknown kernel {kernel!r}; valid: fwd")
        port = load_port(self.name)
        z, y = port.addmm_fwd(inputs["x"], inputs["weight"], inputs["bias"], True, config=config)
        return {"z": z, "y": y}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        port = load_port(self.name)
        out = self.launch("fwd", inputs, (configs or {}).get("fwd"))
        dx, dw, db = port.addmm_bwd(
            inputs["x"], inputs["weight"], out["z"], inputs["dy"], True, True
        )
        return {**out, "dx": dx, "dweight": dw, "dbias": db}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        config = (configs or {}).get("fwd")
        return lambda: self.launch("fwd", inputs, config)

    # -- upstream ------------------------------------------------------------------------------
    def _runs_upstream(self, inputs: Tensors) -> bool:
        """Upstream's forward is autotuned by Triton's GPU autotuner and calls libdevice's
        fast_dividef: it runs on CUDA only (not in the interpreter)."""
        return self.upstream.missing() is None and inputs["x"].is_cuda

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return () if self.upstream.missing() else self.output_names

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        if not self._runs_upstream(inputs):
            return {}
        module = self.upstream.load()
        x, w, b, dy = (inputs[k] for k in self.input_names)
        z, y = module.triton_addmm_silu_fwd(x, w, b, silu=True)
        dx, dw, db = module.triton_addmm_silu_bwd(x, w, z, dy, is_y_1d=True, silu=True)
        return {"z": z, "y": y, "dx": dx, "dweight": dw, "dbias": db}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if not self._runs_upstream(inputs):
            return None
        module = self.upstream.load()
        x, w, b = (inputs[k] for k in ("x", "weight", "bias"))
        return lambda: module.triton_addmm_silu_fwd(x, w, b, silu=True)


SPEC = Addmm()
