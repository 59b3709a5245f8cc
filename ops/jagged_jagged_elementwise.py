"""jagged_jagged_elementwise (FBGEMM Triton `triton_jagged_add_jagged`, `triton_jagged_mul_jagged`):
the values of two jagged tensors of one layout, [N, D] rows, added or multiplied element by element.

Upstream's kernel (`jagged_jagged_elementwise_arithmetic_ops`) takes no offsets: both tensors
hold the same rows, so the op is over dense rows, N = sum_L. `add`: out = x + y, `mul`:
out = x * y, in the dtype (each rounded once: the exact sum or product of two fp16 or bf16
values fits fp32). Upstream has no backward (dx = dout, dy = dout for add; dout * y and dout * x
for mul are the same kernels).
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import torch

from .dense_rows import DenseRowsOp
from .jagged_copy import UPSTREAM_FILE
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, KernelSpec, Tensors, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "jagged_jagged_elementwise"
#: Upstream's thread_block_row_size and thread_block_col_size.
UPSTREAM_BLOCK = 32
#: kernel -> (upstream's entry point, its ops_func).
FORMS = {"add": ("triton_jagged_add_jagged", "add"), "mul": ("triton_jagged_mul_jagged", "mul")}

# (N, D): a single row, no rows, D not a power of two, rows not a multiple of a row block.
ACCURACY_SHAPES = ((1, 7), (0, 16), (37, 40), (70, 100))
# Jagged embeddings at recommendation sizes: 10^5-10^6 rows of 256-1024 features.
PERFORMANCE_SHAPES = (
    (262144, 256, "float16"),
    (524288, 256, "bfloat16"),
    (131072, 512, "float32"),
    (131072, 1024, "bfloat16"),
)


def _tiles(config: Config, case: Case) -> int:
    """Tiles of the output: row blocks of N times column blocks of D."""
    rows = -(-case.shape["N"] // config["BLOCK_ROW"])
    return rows * -(-case.shape["D"] // config["BLOCK_COL"])


def _grid(config: Config, case: Case) -> tuple[int]:
    return (max(1, _tiles(config, case)),)


def _tile_bytes(config: Config, case: Case) -> int:
    """x, y and the output tile in the dtype."""
    return 3 * config["BLOCK_ROW"] * config["BLOCK_COL"] * case.torch_dtype.itemsize


def _stream_bytes(config: Config, case: Case) -> int:
    return 2 * config["BLOCK_ROW"] * config["BLOCK_COL"] * case.torch_dtype.itemsize


def _default(case: Case) -> Config:
    return {"BLOCK_ROW": UPSTREAM_BLOCK, "BLOCK_COL": UPSTREAM_BLOCK, "num_warps": 4}


def _kernel(name: str, output: str) -> KernelSpec:
    return KernelSpec(
        name=name,
        tunables=(
            Tunable("BLOCK_ROW", pow2_range(1, 128)),
            Tunable("BLOCK_COL", pow2_range(16, 512)),
            Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
            MULTIBUFFER,
            PROGRAMS,
        ),
        outputs=(output,),
        default=_default,
        grid=_grid,
        tile_bytes=_tile_bytes,
        stream_bytes=_stream_bytes,
        # A block over its dimension padded only computes padding; upstream's 32 stays allowed.
        constraints=(
            BlockFits("BLOCK_COL", lambda c: max(UPSTREAM_BLOCK, next_pow2(c.shape["D"])), "D"),
            BlockFits("BLOCK_ROW", lambda c: max(UPSTREAM_BLOCK, next_pow2(c.shape["N"])), "N"),
        ),
        port_kernel="_jagged_jagged_elementwise_kernel",
        upstream_kernel="jagged_jagged_elementwise_arithmetic_ops",
    )


class JaggedJaggedElementwise(DenseRowsOp):
    name = NAME
    summary = "Add or multiply the [N, D] values of two jagged tensors of one layout (no backward)"
    upstream = dataclasses.replace(
        UPSTREAM_FILE, functions=tuple(entry for entry, _ in FORMS.values()), lines="19-157"
    )
    shape_keys = ("N", "D")
    input_names = ("x", "y")
    output_names = ("sum", "product")
    kernels = (_kernel("add", "sum"), _kernel("mul", "product"))
    parts = {"add": ("add",), "mul": ("mul",)}
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        n, d = case.shape["N"], case.shape["D"]
        tensors = {"x": torch.randn(n, d, generator=gen), "y": torch.randn(n, d, generator=gen)}
        return {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, y = (inputs[k].to(compute_dtype) for k in self.input_names)
        return {"sum": x + y, "product": x * y}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """x and y read, the output written; one flop an element."""
        elements = case.shape["N"] * case.shape["D"]
        return 3 * elements * case.torch_dtype.itemsize, elements

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel not in FORMS:
            raise ValueError(f"unknown kernel {kernel!r}; valid: {', '.join(FORMS)}")
        port = load_port(NAME)
        launcher = getattr(port, f"jagged_jagged_elementwise_{kernel}")
        (output,) = self.kernel(kernel).outputs
        return {output: launcher(inputs["x"], inputs["y"], config=config)}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        outputs: Tensors = {}
        for kernel in FORMS:
            outputs |= self.launch(kernel, inputs, configs.get(kernel))
        return outputs

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        config = (configs or {}).get(part)
        return lambda: self.launch(part, inputs, config)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def _upstream(self, kernel: str, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        up = self.upstream.load()
        entry, ops_func = FORMS[kernel]
        if x.is_cuda:
            return getattr(up, entry)(x, y)
        # Upstream's wrapper allocates on "cuda"; elsewhere launch its kernel exactly as it does.
        out = torch.empty_like(x)
        m, n = x.shape
        grid = (-(-m // UPSTREAM_BLOCK) * -(-n // UPSTREAM_BLOCK),)
        if grid[0]:
            up.jagged_jagged_elementwise_arithmetic_ops[grid](
                x, y, m, n, x.stride(0), x.stride(1), out, UPSTREAM_BLOCK, UPSTREAM_BLOCK,
                ops_func=ops_func,
            )  # fmt: skip
        return out

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        x, y = inputs["x"], inputs["y"]
        return {self.kernel(k).outputs[0]: self._upstream(k, x, y) for k in FORMS}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        x, y = inputs["x"], inputs["y"]
        return lambda: self._upstream(part, x, y)


SPEC = JaggedJaggedElementwise()
