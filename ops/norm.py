"""What the row norms of recsys-examples' `triton_layer_norm.py` share: [N, D] shapes and cases,
the three kernels' tunables and tile models, and the upstream file.

Each norm has a forward (one row's statistics and output per row), a backward dx that also sums
the weight gradient's partial rows per program, and a backward that adds those partials. The
ports run every kernel over a fixed number of programs (`NUM_PROGRAMS`) that walk the row blocks:
upstream sizes its backward grid by the SM count (`min(sms * 8, N / 4)` programs), and an Ascend
launch takes at most 65535 blocks, so a forward of 10^6 rows must loop there too.
"""

from __future__ import annotations

import zlib
from abc import abstractmethod
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .dense_rows import DenseRowsOp
from .npu_tunables import MULTIBUFFER
from .spec import (
    BlockFits,
    Case,
    Config,
    KernelSpec,
    Tensors,
    Upstream,
    canonical_dtype,
    next_pow2,
    pow2_range,
)
from .tunable import Role, Tunable

UPSTREAM_FILE = Upstream(
    file="examples/hstu/ops/triton_ops/triton_layer_norm.py",
    sha256="2f41c259660845f99e7ece2b5c93415c749909bb5c6ec749979dda967be67233",
    functions=(),
    lines="",
    source=RECSYS_EXAMPLES,
)
EPS = 1e-6
#: The most programs a launch has: an Ascend launch over 65535 blocks fails.
MAX_NUM_PROGRAMS = 32768
#: fp32 elements of a [BLOCK_N, BLOCK_D] tile one CUDA thread may hold before the kernel spills.
MAX_TILE_PER_THREAD = 128

# (N, D): a single row, no rows, D not a power of two, D of one element, rows not a multiple of
# a row block, D above 8192 (an fp16 row over 16 KiB).
ACCURACY_SHAPES = ((1, 64), (0, 32), (37, 100), (5, 1), (130, 48), (3, 9000))
# HSTU sizes: 10^5-10^6 rows of D 256-1024 (embedding and attention widths).
PERFORMANCE_SHAPES = (
    (131072, 256, "bfloat16"),
    (262144, 512, "float16"),
    (1048576, 256, "float32"),
    (131072, 1024, "bfloat16"),
)


def block_d(case: Case) -> int:
    """The one column block: the whole row, as upstream's kernels hold it."""
    return next_pow2(case.shape["D"])


def programs(config: Config, case: Case) -> int:
    """Programs of a launch: NUM_PROGRAMS, or one per row block where there are fewer (or where
    NUM_PROGRAMS is 0, a kernel's value for a program per row block)."""
    blocks = -(-case.shape["N"] // config["BLOCK_N"])
    return max(1, min(config["NUM_PROGRAMS"] or blocks, blocks))


def upstream_warps(case: Case) -> int:
    """Upstream's num_warps for a row kernel: min(max(BLOCK_D // 256, 1), 8)."""
    return min(max(block_d(case) // 256, 1), 8)


def rows_grid(config: Config, case: Case) -> tuple[int]:
    """A row kernel's launch: its program count (`programs`)."""
    return (programs(config, case),)


def _reduce_grid(config: Config, case: Case) -> tuple[int]:
    return (-(-case.shape["D"] // config["BLOCK_D"]),)


def fits_registers(config: Config, case: Case, limits) -> str | None:
    """A row tile of more fp32 elements than the threads can hold spills."""
    if "num_warps" not in config:
        return None
    width = config.get("BLOCK_D", block_d(case))
    elements, threads = config["BLOCK_N"] * width, 32 * config["num_warps"]
    if elements > MAX_TILE_PER_THREAD * threads:
        return (
            f"BLOCK_N x BLOCK_D = {elements} elements over {threads} threads: more than "
            f"{MAX_TILE_PER_THREAD} per thread spills"
        )
    return None


ROW_TUNABLES = (
    Tunable("BLOCK_N", pow2_range(1, 64)),
    Tunable("NUM_PROGRAMS", pow2_range(16, MAX_NUM_PROGRAMS), role=Role.LAUNCHER_ARGUMENT),
    Tunable("num_warps", (1, 2, 4, 8, 16), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)
REDUCE_TUNABLES = (
    Tunable("BLOCK_N", pow2_range(8, 256)),
    Tunable("BLOCK_D", pow2_range(4, 256)),
    Tunable("num_warps", (1, 2, 4, 8, 16), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)
ROWS_FIT = BlockFits("BLOCK_N", lambda c: next_pow2(c.shape["N"]), "N")
COLUMNS_FIT = BlockFits("BLOCK_D", lambda c: max(4, next_pow2(c.shape["D"])), "D")


def fwd_default(case: Case) -> Config:
    """Upstream's forward: one row per program (grid (N,)), here at most MAX_NUM_PROGRAMS of them."""
    return {"BLOCK_N": 1, "NUM_PROGRAMS": MAX_NUM_PROGRAMS, "num_warps": upstream_warps(case)}


def reduce_default(case: Case) -> Config:
    """Upstream's dw/db sum: the first config of its autotune list (BLOCK_N 32, 8 warps) and its
    BLOCK_D = min(max(next_pow2(cdiv(D, next_pow2(sms * 4))), 4), 128) with an H200's 132 SMs."""
    blocks = next_pow2(132 * 4)
    width = min(max(next_pow2(-(-case.shape["D"] // blocks)), 4), 128)
    return {"BLOCK_N": 32, "BLOCK_D": width, "num_warps": 8}


def fwd_tiles(config: Config, case: Case) -> int:
    # x in its dtype, x and x - mean in fp32; the weight and bias rows in fp32.
    return config["BLOCK_N"] * block_d(case) * (case.torch_dtype.itemsize + 8) + 8 * block_d(case)


def fwd_stream(config: Config, case: Case) -> int:
    return config["BLOCK_N"] * block_d(case) * case.torch_dtype.itemsize


def dx_tiles(config: Config, case: Case) -> int:
    # x and dy in their dtype, x, dy and xhat in fp32 (dx takes xhat's place: for the 910B the
    # compiler plans 183168-187008 B where four fp32 tiles would need 199680 B, the compile
    # matrix, docs/benchmarks.md); w and the two gradient sums in fp32.
    size = case.torch_dtype.itemsize
    return config["BLOCK_N"] * block_d(case) * (2 * size + 12) + 12 * block_d(case)


def dx_stream(config: Config, case: Case) -> int:
    return 2 * config["BLOCK_N"] * block_d(case) * case.torch_dtype.itemsize


def reduce_tiles(
    partials: int,
) -> tuple[Callable[[Config, Case], int], Callable[[Config, Case], int]]:
    """(tile_bytes, stream_bytes) of the sum over `partials` fp32 partial-row tensors: each a
    loaded tile and an accumulator."""

    def tiles(config: Config, case: Case) -> int:
        return 8 * partials * config["BLOCK_N"] * config["BLOCK_D"]

    def stream(config: Config, case: Case) -> int:
        return 4 * partials * config["BLOCK_N"] * config["BLOCK_D"]

    return tiles, stream


def row_kernels(
    dx_default: Callable[[Case], Config], partials: int, names: dict[str, tuple[str, str]],
    outputs: dict[str, tuple[str, ...]],
) -> tuple[KernelSpec, ...]:  # fmt: skip
    """The three kernels of a norm: `names` gives each its (port, upstream) function names."""
    tiles, stream = reduce_tiles(partials)
    rows = dict(
        tunables=ROW_TUNABLES, grid=rows_grid, constraints=(ROWS_FIT, fits_registers),
        whole_keys=("D",),
    )  # fmt: skip
    return (
        KernelSpec(
            name="fwd", outputs=outputs["fwd"], default=fwd_default, tile_bytes=fwd_tiles,
            stream_bytes=fwd_stream, port_kernel=names["fwd"][0],
            upstream_kernel=names["fwd"][1], **rows,
        ),
        KernelSpec(
            name="bwd_dx", outputs=outputs["bwd_dx"], default=dx_default, tile_bytes=dx_tiles,
            stream_bytes=dx_stream, port_kernel=names["bwd_dx"][0],
            upstream_kernel=names["bwd_dx"][1], feeds="bwd_dw", **rows,
        ),
        KernelSpec(
            name="bwd_dw", tunables=REDUCE_TUNABLES, outputs=outputs["bwd_dw"],
            default=reduce_default, grid=_reduce_grid, tile_bytes=tiles, stream_bytes=stream,
            constraints=(COLUMNS_FIT, fits_registers), port_kernel=names["bwd_dw"][0],
            upstream_kernel=names["bwd_dw"][1],
        ),
    )  # fmt: skip


class NormOp(DenseRowsOp):
    """A row norm of [N, D] rows with a weight (and a bias): forward and backward.

    Subclasses give the reference, the port calls (`launchers`) and upstream's autograd
    Function (`upstream_function`)."""

    shape_keys = ("N", "D")
    parts = {"fwd": ("fwd",), "bwd": ("bwd_dx", "bwd_dw")}
    #: Names of the partial gradient rows bwd_dx leaves for bwd_dw, and the row values summed.
    partial_names: tuple[str, ...]
    upstream_function: str

    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        n, d = case.shape["N"], case.shape["D"]
        tensors = {
            "x": 2.0 * torch.randn(n, d, generator=gen) + 0.5,
            "weight": 1.0 + 0.1 * torch.randn(d, generator=gen),
            "bias": 0.1 * torch.randn(d, generator=gen),
            "dy": torch.randn(n, d, generator=gen),
        }
        return {k: tensors[k].to(case.torch_dtype).to(device) for k in self.input_names}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """fwd: x read, y written; bwd: x and dy read, dx written (the weights and the partial
        rows are small beside them). Flops per element: about 8 forward, 12 backward."""
        elements = case.shape["N"] * case.shape["D"]
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return 2 * elements * size, 8 * elements
        return 3 * elements * size, 12 * elements

    # -- the port ------------------------------------------------------------------------------
    @abstractmethod
    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        """kernel -> a call of the port's launcher of that kernel on the inputs it needs."""

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        outputs = self.launchers()[kernel](inputs, config)
        return {name: outputs[name] for name in self.kernel(kernel).outputs}

    def timed_call(self, kernel: str, inputs: Tensors, config: Config) -> Callable[[], object]:
        """bwd_dx with the sum of the partial rows it leaves (one a program, or a group norm's
        lock rows), bwd_dw at the config its launcher picks for the case: on the H200 a group-norm bwd_dx config 1.03x
        faster alone left 10^6 rows, and the part took 1.554 ms against the default's 1.46
        (docs/benchmarks.md, "Over row blocks")."""
        fed = self.kernel(kernel).feeds
        if not fed:
            return super().timed_call(kernel, inputs, config)
        launch = self.launchers()

        def with_sum() -> Tensors:
            return launch[fed]({**inputs, **launch[kernel](inputs, config)}, None)

        return with_sum

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        launch = self.launchers()
        state = dict(inputs)
        for kernel in ("fwd", "bwd_dx", "bwd_dw"):
            state.update(launch[kernel](state, configs.get(kernel)))
        return {name: state[name] for name in self.output_names}

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        """bwd_dx: the forward's fp32 statistics from the golden; bwd_dw: the partial rows that
        the default bwd_dx leaves (its program count), summed from the golden's row terms."""
        if kernel == "fwd":
            return inputs
        x = inputs["x"]
        stats = {k: golden[k].to(device=x.device, dtype=torch.float32) for k in self.stats}
        if kernel == "bwd_dx":
            return {**inputs, **stats}
        n = x.size(0)
        count = programs(
            self.kernel("bwd_dx").default(self._case_of(inputs)), self._case_of(inputs)
        )
        group = torch.arange(n, device=x.device) % count
        terms = self.row_terms({**inputs, **stats})
        partial = {
            name: torch.zeros(count, term.size(1), device=x.device).index_add_(0, group, term)
            for name, term in zip(self.partial_names, terms, strict=True)
        }
        return {**inputs, **partial}

    def _case_of(self, inputs: Tensors) -> Case:
        n, d = inputs["x"].shape
        return self.make_case({"N": n, "D": d}, canonical_dtype(str(inputs["x"].dtype)[6:]))

    #: The forward's per-row statistics the backward reads (mean, rstd).
    stats: tuple[str, ...]

    @abstractmethod
    def row_terms(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        """Per row, in fp32, what bwd_dw sums over rows (dy * xhat, and dy for a bias)."""

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        configs = configs or {}
        launch = self.launchers()
        if part == "fwd":
            return lambda: launch["fwd"](inputs, configs.get("fwd"))
        state = {**inputs, **launch["fwd"](inputs, configs.get("fwd"))}

        def backward() -> Tensors:
            partial = launch["bwd_dx"](state, configs.get("bwd_dx"))
            return launch["bwd_dw"]({**state, **partial}, configs.get("bwd_dw"))

        return backward

    # -- upstream ------------------------------------------------------------------------------
    @abstractmethod
    def upstream_args(self, inputs: Tensors) -> tuple:
        """The arguments of upstream's Function.forward after ctx."""

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return () if self.upstream.missing() else self.output_names

    def _forward(self, inputs: Tensors):
        """(ctx, y) of upstream's autograd Function's forward, called as autograd calls it."""
        function = getattr(self.upstream_module(), self.upstream_function)
        ctx = _Context()
        return function, ctx, function.forward(ctx, *self.upstream_args(inputs))

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        """Upstream's forward, and where it runs (CUDA: its backward reads the SM count) its
        backward; nothing where upstream is missing (verify then takes torch's ops)."""
        if self.upstream.missing():
            return {}
        function, ctx, y = self._forward(inputs)
        if not inputs["x"].is_cuda:
            return {"y": y}
        grads = function.backward(ctx, inputs["dy"])
        return {"y": y, **dict(zip(self.output_names[1:], grads, strict=False))}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if self.upstream.missing():
            return None
        if part == "fwd":
            return lambda: self._forward(inputs)[2]
        function, ctx, _ = self._forward(inputs)
        return lambda: function.backward(ctx, inputs["dy"])


class _Context:
    """What torch.autograd gives a Function's forward and backward: saved tensors and fields."""

    def save_for_backward(self, *tensors: torch.Tensor) -> None:
        self.saved_tensors = tensors
