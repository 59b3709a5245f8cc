"""silu (recsys-examples' Triton `triton_silu`, HSTU's activation of its uvqk projection):
y = x * sigmoid(x) elementwise, and its backward dx = dy * sigmoid(x) * (1 + x (1 - sigmoid(x))).

Upstream flattens its input and runs one block of `x_block_size` elements per program, forward and
backward each one kernel; the cases here are [N, D] tensors (upstream's tests: [batch, hidden]),
and the kernels see N * D elements. Both kernels are tuned: `fwd` and `bwd`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .dense_rows import DenseRowsOp
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import Role, Tunable

NAME = "silu"
#: Programs of a launch at most on an NPU (an Ascend launch over 65535 blocks fails); beyond,
#: each walks the blocks pid, pid + programs, ... (the port's MAX_PROGRAMS["npu"]).
MAX_NPU_PROGRAMS = 32768
#: Upstream's first autotune config (`silu_configs`: x_block_size 256-2048 by num_warps 2-16).
UPSTREAM_BLOCK, UPSTREAM_WARPS = 256, 2

# (N, D): a single element, no rows, D not a power of two, one row, a partial last block,
# several blocks of the default.
ACCURACY_SHAPES = ((1, 1), (0, 64), (37, 100), (1, 300), (5, 3), (200, 128))
# HSTU sizes: the uvqk projection of 10^5-10^6 rows, 256-1024 wide (heads x (2 attention + 2
# linear dims)).
PERFORMANCE_SHAPES = (
    (131072, 1024, "bfloat16"),
    (262144, 512, "float16"),
    (131072, 512, "float32"),
    (524288, 256, "bfloat16"),
)

TUNABLES = (
    # upstream's name: its autotune list's
    Tunable("x_block_size", pow2_range(256, 8192), role=Role.LAUNCHER_ARGUMENT),
    Tunable("num_warps", (2, 4, 8, 16), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)


def default(case: Case) -> Config:
    """Upstream's first autotune config; which of its sixteen its autotuner keeps for a size is
    a timing on the GPU, not a rule."""
    return {"x_block_size": UPSTREAM_BLOCK, "num_warps": UPSTREAM_WARPS}


def elements(case: Case) -> int:
    return case.shape["N"] * case.shape["D"]


def _grid(config: Config, case: Case) -> tuple[int]:
    blocks = -(-elements(case) // config["x_block_size"])
    return (max(1, min(MAX_NPU_PROGRAMS, blocks)),)


def _fits(config: Config, case: Case, limits) -> str | None:
    """A block over the elements padded to a power of two only computes padding; upstream's
    default stays allowed."""
    bound = max(UPSTREAM_BLOCK, next_pow2(elements(case)))
    if config["x_block_size"] > bound:
        return f"x_block_size={config['x_block_size']} is larger than N * D padded to {bound}"
    return None


def _kernel(name: str, loaded: int, outputs: tuple[str, ...], port: str, upstream: str):
    """A kernel over `loaded` input tensors: each in its dtype and in fp32, the result in fp32 and
    in the output dtype (the backward's sigmoid besides, within the bound from below)."""

    def tiles(config: Config, case: Case) -> int:
        size = case.torch_dtype.itemsize
        return config["x_block_size"] * ((loaded + 1) * (size + 4))

    def stream(config: Config, case: Case) -> int:
        return loaded * config["x_block_size"] * case.torch_dtype.itemsize

    return KernelSpec(
        name=name, tunables=TUNABLES, outputs=outputs, default=default, grid=_grid,
        tile_bytes=tiles, stream_bytes=stream, constraints=(_fits,), port_kernel=port,
        upstream_kernel=upstream,
    )  # fmt: skip


FWD = _kernel("fwd", 1, ("y",), "_silu_fwd_kernel", "_silu_forward")
BWD = _kernel("bwd", 2, ("dx",), "_silu_bwd_kernel", "_silu_backward")


class Silu(DenseRowsOp):
    name = NAME
    summary = "y = silu(x) elementwise over [N, D]; fwd and bwd (dx = dy * silu'(x))"
    upstream = Upstream(
        file="examples/hstu/ops/triton_ops/triton_silu.py",
        sha256="3d2b625a00a213ceff07a9801aa4b20c17fd456fbfb953af3f8f61e310d3bab1",
        functions=("triton_silu", "triton_silu_fwd", "triton_silu_bwd"),
        lines="37-142",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("N", "D")
    input_names = ("x", "dy")
    output_names = ("y", "dx")
    kernels = (FWD, BWD)
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}

    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        """x over [-4, 4] (both tails of the sigmoid; upstream's test draws [-1, 1]), dy normal."""
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        n, d = case.shape["N"], case.shape["D"]
        tensors = {
            "x": 8.0 * torch.rand(n, d, generator=gen) - 4.0,
            "dy": torch.randn(n, d, generator=gen),
        }
        return {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        s = torch.sigmoid(x)
        return {"y": x * s, "dx": dy * s * (1 + x * (1 - s))}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """fwd: x read, y written; bwd: dy and x read, dx written. A few flops per element."""
        n = elements(case)
        size = case.torch_dtype.itemsize
        return (2 if part == "fwd" else 3) * n * size, (4 if part == "fwd" else 7) * n

    # -- the port ------------------------------------------------------------------------------
    def _launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        port = load_port(self.name)
        return {
            "fwd": lambda t, config: {"y": port.silu_fwd(t["x"], config=config)},
            "bwd": lambda t, config: {"dx": port.silu_bwd(t["dy"], t["x"], config=config)},
        }

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        self.kernel(kernel)  # a ValueError naming the kernels for any other name
        return self._launchers()[kernel](inputs, config)

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        return {k: v for kernel in ("fwd", "bwd") for k, v in
                self.launch(kernel, inputs, configs.get(kernel)).items()}  # fmt: skip

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        config = (configs or {}).get(part)
        return lambda: self.launch(part, inputs, config)

    # -- upstream ------------------------------------------------------------------------------
    def _runs_upstream(self, inputs: Tensors) -> bool:
        """Upstream's kernels are autotuned by Triton's GPU autotuner (and its forward calls
        libdevice's fast_dividef): they run on CUDA only, not in the interpreter."""
        return self.upstream.missing() is None and inputs["x"].is_cuda

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return () if self.upstream.missing() else self.output_names

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        if not self._runs_upstream(inputs):
            return {}
        module = self.upstream.load()
        return {
            "y": module.triton_silu_fwd(inputs["x"]),
            "dx": module.triton_silu_bwd(inputs["dy"], inputs["x"]),
        }

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if not self._runs_upstream(inputs):
            return None
        module = self.upstream.load()
        if part == "fwd":
            return lambda: module.triton_silu_fwd(inputs["x"])
        return lambda: module.triton_silu_bwd(inputs["dy"], inputs["x"])


SPEC = Silu()
