"""jagged_dense_bmm (FBGEMM Triton `JaggedDenseBmm`): a jagged [sum_L, D] times a dense [B, D, T].

out[rows of b] = x[rows of b] @ y[b] for the first min(len_b, max_seq_len) rows of sequence b;
rows past max_seq_len come out as zeros. Backward as upstream's autograd Function:
dx = dout @ y^T (the jagged x dense kernel) and dy = x^T @ dout (the jagged x jagged kernel).
This module also holds what jagged_jagged_bmm shares with it (cases, tunables, kernel specs).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from .cases import case_offsets, effective_lengths, standard_cases, total_rows
from .jagged import pad_rows, unpad_rows
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import (
    SHORT_DTYPE,
    BlockFits,
    Case,
    CaseKind,
    Config,
    Dot,
    KernelSpec,
    OpSpec,
    Tensors,
    Upstream,
    next_pow2,
    pow2_range,
)
from .tunable import Role, Tunable

NAME = "jagged_dense_bmm"
UPSTREAM_FILE = "sll/triton/triton_jagged_bmm.py"
UPSTREAM_SHA256 = "6d922093e18174ff253cea003a222f3bef4813ce81e448e58e69e1ebe22e41e0"
#: Both kernels, both launchers and both autograd Functions of upstream's file.
UPSTREAM_LINES = "14-380"

TUNABLES = (
    Tunable("BLOCK_M", pow2_range(16, 256)),
    Tunable("BLOCK_N", pow2_range(16, 256)),
    Tunable("BLOCK_K", pow2_range(16, 256)),
    Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION),
    Tunable("num_stages", (2, 3, 4), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)

# (B, max_seq_len, D, T, lengths): B=1, empty sequences, sequences past max_seq_len, and D, T,
# max_seq_len that are not multiples of any block (upstream's set_block_size gives 16/32/64).
ACCURACY_SHAPES = (
    (1, 16, 16, 16, (16,)),
    (4, 16, 32, 20, (0, 5, 16, 23)),
    (3, 40, 24, 72, (40, 0, 57)),
)
# Recommendation-sized; the upstream defaults stay under Ascend's 65535 blocks per launch.
PERFORMANCE_SHAPES = (
    (1024, 256, 128, 128, "bfloat16"),
    (512, 1024, 64, 256, "float32"),
    (1024, 512, 256, 64, "bfloat16"),
    (256, 4096, 128, 128, "float16"),
)


# -- upstream's launch configs (triton_jagged_dense_bmm / triton_jagged_jagged_bmm) ------------
def set_block_size(n: int) -> int:
    return 64 if n > 64 else 32 if n > 16 else 16


def dense_bmm_default(max_seq_len: int, n: int, k: int) -> Config:
    """Upstream's jagged x dense launch: BLOCK_M by max_seq_len, N and K by set_block_size,
    and Triton's num_warps=4, num_stages=3."""
    return {
        "BLOCK_M": 32 if max_seq_len < 50 else 64,
        "BLOCK_N": set_block_size(n),
        "BLOCK_K": set_block_size(k),
        "num_warps": 4,
        "num_stages": 3,
    }


def jagged_bmm_default(m: int, n: int) -> Config:
    """Upstream's jagged x jagged launch: M and N by set_block_size, BLOCK_K = 32."""
    return {
        "BLOCK_M": set_block_size(m),
        "BLOCK_N": set_block_size(n),
        "BLOCK_K": 32,
        "num_warps": 4,
        "num_stages": 3,
    }


# -- kernel specs ---------------------------------------------------------------------------
#: The shape keys of one kernel's matmul (M, N, K): M rows of the output tile grid, N its
#: columns, K the reduction (max_seq_len where it runs over the jagged rows).
Dims = tuple[str, str, str]


def _tiles(config: Config, case: Case) -> int:
    bm, bn, bk, e = (
        config["BLOCK_M"],
        config["BLOCK_N"],
        config["BLOCK_K"],
        case.torch_dtype.itemsize,
    )
    # a and b tiles in the input dtype, the fp32 accumulator and its cast for the store.
    return e * (bm * bk + bk * bn) + 4 * bm * bn + e * bm * bn


def _stream(config: Config, case: Case) -> int:
    bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
    return case.torch_dtype.itemsize * (bm * bk + bk * bn)


def _dots(transposed: str) -> Callable[[Config, Case], tuple[Dot, ...]]:
    """acc += a b inside the loop over BLOCK_K, the result stored; an operand the kernel takes
    transposed (x^T, y^T) is transposed by the vector code: its rows run along BLOCK_K (a) or
    BLOCK_N (b) in the UB."""

    def dots(config: Config, case: Case) -> tuple[Dot, ...]:
        bm, bn, bk = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"]
        rows = {"": (), "a": (bk,), "b": (bn,)}[transposed]
        e = case.torch_dtype.itemsize
        return (Dot(bm, bn, bk, e, stored=True, vector=transposed, vector_rows=rows),)

    return dots


def _fits(tunable: str, key: str, default: Callable[[Case], Config]) -> BlockFits:
    """A block larger than its padded dimension only computes padding (upstream's own default,
    e.g. BLOCK_K = 32 over a max_seq_len of 16, stays allowed)."""
    return BlockFits(tunable, lambda c: max(16, next_pow2(c.shape[key]), default(c)[tunable]), key)


def _accumulator_registers(config: Config, case: Case, limits) -> str | None:
    """CUDA: the fp32 accumulator alone must fit the 255 registers of a thread."""
    if limits.shared_memory_bytes is None or "num_warps" not in config:
        return None
    per_thread = config["BLOCK_M"] * config["BLOCK_N"] // (32 * config["num_warps"])
    if per_thread > 128:
        return (
            f"a {config['BLOCK_M']}x{config['BLOCK_N']} fp32 accumulator over {config['num_warps']}"
            f" warps needs {per_thread} registers a thread (over 128 of 255: spills)"
        )
    return None


def bmm_kernel(
    name: str,
    jagged_out: bool,
    dims: Dims,
    default: Callable[[Case], Config],
    outputs: tuple[str, ...],
    transposed: str = "",
) -> KernelSpec:
    """A kernel spec of the jagged x dense (`jagged_out`) or jagged x jagged kernel; `transposed`
    names the operand it takes transposed ("a", "b")."""

    def grid(config: Config, case: Case) -> tuple[int, int]:
        m, n = (case.shape[key] for key in dims[:2])
        return -(-m // config["BLOCK_M"]) * -(-n // config["BLOCK_N"]), case.shape["B"]

    return KernelSpec(
        name=name,
        tunables=TUNABLES,
        outputs=outputs,
        default=default,
        grid=grid,
        tile_bytes=_tiles,
        stream_bytes=_stream,
        constraints=(
            _fits("BLOCK_M", dims[0], default),
            _fits("BLOCK_N", dims[1], default),
            _fits("BLOCK_K", dims[2], default),
            _accumulator_registers,
        ),
        dots=_dots(transposed),
        port_kernel="_jagged_dense_bmm_kernel" if jagged_out else "_jagged_jagged_bmm_kernel",
        upstream_kernel="jagged_dense_bmm_kernel" if jagged_out else "jagged_jagged_bmm_kernel",
    )


def uses_tf32(case: Case) -> bool:
    """fp32 performance cases run with allow_tf32=True (upstream's callers pass it); accuracy
    cases keep strict fp32 dots."""
    return case.kind == "performance" and case.dtype == "float32"


def _n(c: Case) -> int:
    return c.shape["max_seq_len"]


def _d(c: Case) -> int:
    return c.shape["D"]


def _t(c: Case) -> int:
    return c.shape["T"]


class JaggedBmmOp(OpSpec):
    """What both bmm ops share: shapes (B, max_seq_len, D, T), cases, inputs, the two kernels."""

    shape_keys = ("B", "max_seq_len", "D", "T")
    input_names = ("x", "y", "offsets", "max_seq_len", "dout")
    output_names = ("out", "dx", "dy")
    parts = {"fwd": ("fwd",), "bwd": ("bwd_dx", "bwd_dy")}
    #: Port functions: (forward, backward).
    port_functions: tuple[str, str]
    #: Upstream's autograd Function.
    upstream_function: str

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, d, t = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_t{t}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def _y_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        raise NotImplementedError

    def _dout_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        raise NotImplementedError

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        d = case.shape["D"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = case_offsets(case, torch.device("cpu"))
        rows = int(offsets[-1])
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "y": torch.randn(*self._y_shape(case, rows), generator=gen),
            "dout": torch.randn(*self._dout_shape(case, rows), generator=gen),
        }
        out = {name: t.to(case.torch_dtype).to(device) for name, t in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(case.shape["max_seq_len"])
        out["allow_tf32"] = torch.tensor(uses_tf32(case))
        return out

    def tolerance_for(self, case: Case) -> float:
        return 5e-3 if uses_tf32(case) else self.tolerance[case.dtype]

    def _args(self, inputs: Tensors):
        return (
            inputs["x"],
            inputs["y"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
            bool(inputs["allow_tf32"]) if "allow_tf32" in inputs else False,
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(self.name)
        fwd, bwd = (getattr(port, f) for f in self.port_functions)
        x, y, offsets, n, tf32 = self._args(inputs)
        out = fwd(x, y, offsets, n, tf32, config=configs.get("fwd"))
        dx, dy = bwd(x, y, offsets, n, inputs["dout"], tf32, configs=configs)
        return {"out": out, "dx": dx, "dy": dy}

    def launch(self, kernel: str, inputs: Tensors, config: Config) -> Tensors:
        port = load_port(self.name)
        x, y, offsets, n, tf32 = self._args(inputs)
        if kernel == "fwd":
            fwd = getattr(port, self.port_functions[0])
            return {"out": fwd(x, y, offsets, n, tf32, config=config)}
        if kernel in ("bwd_dx", "bwd_dy"):
            grad = getattr(port, kernel)(x, y, offsets, n, inputs["dout"], tf32, config=config)
            return {kernel[4:]: grad}
        raise ValueError(f"unknown kernel {kernel!r}")

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(self.name)
        fwd, bwd = (getattr(port, f) for f in self.port_functions)
        x, y, offsets, n, tf32 = self._args(inputs)
        configs = configs or {}
        if part == "fwd":
            return lambda: fwd(x, y, offsets, n, tf32, config=configs.get("fwd"))
        dout = inputs["dout"]
        return lambda: bwd(x, y, offsets, n, dout, tf32, configs=configs)

    # -- upstream ----------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        function = getattr(self.upstream_module(), self.upstream_function)
        x, y, offsets, n, tf32 = self._args(inputs)
        x, y = (t.detach().requires_grad_() for t in (x, y))
        out = function.apply(x, y, offsets, n, tf32)
        dx, dy = torch.autograd.grad(out, (x, y), inputs["dout"])
        return {"out": out.detach(), "dx": dx, "dy": dy}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        function = getattr(self.upstream_module(), self.upstream_function)
        x, y, offsets, n, tf32 = self._args(inputs)
        if part == "fwd":
            return lambda: function.forward(_Ctx(), x, y, offsets, n, tf32)
        ctx = _Ctx()
        function.forward(ctx, x, y, offsets, n, tf32)
        dout = inputs["dout"]
        return lambda: function.backward(ctx, dout)


class _Ctx:
    """A stand-in autograd context: upstream's Function called without autograd's overhead."""

    def save_for_backward(self, *tensors: torch.Tensor) -> None:
        self.saved_tensors = tensors


class JaggedDenseBmm(JaggedBmmOp):
    name = NAME
    summary = (
        "Jagged [sum_L, D] times dense [B, D, T] per sequence -> jagged [sum_L, T]; fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("JaggedDenseBmm", "triton_jagged_dense_bmm", "triton_jagged_jagged_bmm"),
        lines=UPSTREAM_LINES,
    )
    port_functions = ("jagged_dense_bmm_fwd", "jagged_dense_bmm_bwd")
    upstream_function = "JaggedDenseBmm"
    kernels = (
        # out = x [sum_L, D] @ y [B, D, T]
        bmm_kernel(
            "fwd", True, ("max_seq_len", "T", "D"),
            lambda c: dense_bmm_default(_n(c), _t(c), _d(c)), ("out",),
        ),
        # dx = dout [sum_L, T] @ y^T [B, T, D]
        bmm_kernel(
            "bwd_dx", True, ("max_seq_len", "D", "T"),
            lambda c: dense_bmm_default(_n(c), _d(c), _t(c)), ("dx",), "b",
        ),
        # dy = x^T [D, sum_L] @ dout [sum_L, T]
        bmm_kernel(
            "bwd_dy", False, ("D", "T", "max_seq_len"),
            lambda c: jagged_bmm_default(_d(c), _t(c)), ("dy",), "a",
        ),
    )  # fmt: skip

    def _y_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        return case.shape["B"], case.shape["D"], case.shape["T"]

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """E = sum_b min(len_b, max_seq_len) rows used, R = sum_L rows, y the dense [B, D, T].
        fwd: x (E x D) and y read, out (R x T, zeros past max_seq_len) written; 2 E D T flops.
        bwd (dx = dout y^T, dy = x^T dout): dout (E x T), y and x (E x D) read, dx (R x D) and
        dy written; 2 dots, 4 E D T flops."""
        b, d, t = (case.shape[k] for k in ("B", "D", "T"))
        e, r = sum(effective_lengths(case)), total_rows(case)
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return (e * d + b * d * t + r * t) * size, 2 * e * d * t
        return (e * t + b * d * t + e * d + r * d + b * d * t) * size, 4 * e * d * t

    def _dout_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        return rows, case.shape["T"]

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n, offsets = int(inputs["max_seq_len"]), inputs["offsets"]
        x, y = (inputs[k].to(compute_dtype).detach().requires_grad_() for k in ("x", "y"))
        xp, _ = pad_rows(x, offsets, n)
        out = unpad_rows(torch.bmm(xp, y), offsets, x.size(0))
        out.backward(inputs["dout"].to(compute_dtype))
        return {"out": out.detach(), "dx": x.grad, "dy": y.grad}


SPEC = JaggedDenseBmm()
