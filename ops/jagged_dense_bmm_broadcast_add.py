"""jagged_dense_bmm_broadcast_add (recsys-examples' Triton `triton_jagged_dense_bmm_broadcast_add`,
HSTU's per-sequence linear layer): out[rows of b] = x[rows of b] @ y[b] + bias[b].

Shapes: x [sum_L, D] jagged, y [B, D, T] dense, bias [B, T] broadcast over a sequence's rows,
out [sum_L, T]; upstream names them jagged, dense and bias, with K = D and N = T. Backward as
upstream's autograd Function: dx = dout @ y^T (the forward kernel without bias), and
dy = x^T @ dout with dbias = dout summed over the rows (the jagged x jagged kernel, its
reduce-sum on).

max_seq_len sizes upstream's grid (and keys its autotuner); upstream computes the first
max_seq_len rows of each sequence and leaves the rest of `out` unwritten, while its backward sums
every row: it expects max_seq_len >= every length. The port computes every row whatever
max_seq_len is (its programs loop over a longer sequence's row blocks), so both agree wherever
upstream's contract holds; an accuracy case with a longer sequence checks the port alone.

This module also holds what upstream's other ops of `triton_jagged.py` share (`RecsysJaggedOp`).
"""

from __future__ import annotations

import zlib
from abc import abstractmethod
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .cases import case_offsets, standard_cases, total_rows
from .jagged import pad_rows, sequence_chunks, skewed_lengths, unpad_rows
from .jagged_dense_bmm import TUNABLES, _accumulator_registers, _Ctx, _dots, _fits, _stream, _tiles
from .ports import load_port
from .spec import (
    SHORT_DTYPE,
    Case,
    CaseKind,
    Config,
    Dot,
    KernelSpec,
    OpSpec,
    Tensors,
    Upstream,
)

NAME = "jagged_dense_bmm_broadcast_add"
UPSTREAM_FILE = "examples/commons/ops/triton_ops/triton_jagged.py"
UPSTREAM_SHA256 = "bde10fce7c387b0751a274b0625b6ec9f0cb717087c9586a3b31e8e6fe8076ec"
#: Programs of a launch at most: up to this many tiles, upstream's one tile per program (its 3-D
#: grid); beyond, each walks the tiles pid, pid + programs, ... (an Ascend launch over 65535
#: blocks fails).
MAX_PROGRAMS = 32768
#: Letters of the shape keys in case names (b4_n16_d32_t20_fp32, as jagged_dense_bmm's).
_LETTERS = {"B": "b", "max_seq_len": "n", "D": "d", "T": "t"}

# (B, max_seq_len, D, T, lengths): B = 1, a single row, an empty sequence, a sequence longer
# than max_seq_len (upstream's contract broken: the port alone), D and T not powers of two, and
# D over the largest BLOCK_K (several K blocks at any config).
ACCURACY_SHAPES = (
    (1, 16, 16, 16, (16,)),
    (1, 8, 24, 8, (1,)),
    (4, 16, 32, 20, (0, 5, 16, 23)),
    (3, 40, 100, 72, (40, 0, 33)),
    (2, 24, 300, 40, (24, 7)),
)
# HSTU sizes: 1.7 x 10^5 to 7 x 10^5 rows of D 128-256 features into T 128-512.
PERFORMANCE_SHAPES = (
    (512, 1024, 256, 256, "bfloat16"),
    (1024, 512, 256, 512, "float16"),
    (256, 4096, 128, 256, "float32"),
    (2048, 1024, 256, 128, "bfloat16"),
)


def default(case: Case) -> Config:
    """Upstream's first config of `_get_bmm_configs` (the same list for both kernels); which of
    its 32 its autotuner keeps for (max_seq_len bucket, N, K) is a timing on the GPU."""
    return {"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4, "num_stages": 2}


def _bias_tiles(config: Config, case: Case) -> int:
    """The dot's operands (`cube_resident` takes them out again), the result's fp32 tile for the
    bias added by the vector code and the bias row in fp32. A bound from below: the compiler
    splits the result between the two vector cores that share the cube (a mix kernel runs one
    cube and two vector cores) and casts it in place; for the 910B it plans 66304 B for a
    256 x 128 tile, half the fp32 tile and the bias row (the compile matrix, docs/benchmarks.md)."""
    bm, bn, bk, e = (config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"],
                     case.torch_dtype.itemsize)  # fmt: skip
    return e * (bm * bk + bk * bn) + 4 * bm * bn // 2 + 4 * bn


def _bias_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """acc += x_tile @ y_tile over the K loop; the result goes to the vector code (the bias)."""
    e = case.torch_dtype.itemsize
    return (Dot(config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_K"], e),)


def _reduce_tiles(config: Config, case: Case) -> int:
    """The bmm's tiles but the cast of its result, which fixpipe makes on the way out of L0C;
    dout's tile again in the UB for the column sum, in its dtype, and the sum's fp32 row. A bound
    from below: for the 910B the compiler plans 164736 B for 256 x 64 x 256 bf16 tiles, where
    an fp32 copy of dout and the cast would need 262400 B (the compile matrix,
    docs/benchmarks.md)."""
    bm, bk, bn = config["BLOCK_M"], config["BLOCK_K"], config["BLOCK_N"]
    e = case.torch_dtype.itemsize
    return _tiles(config, case) - e * bm * bn + e * bk * bn + 4 * bn


def bmm_kernel(
    name: str,
    dims: tuple[str, str, str],
    outputs: tuple[str, ...],
    jagged_out: bool,
    transposed: str = "",
) -> KernelSpec:
    """A kernel of the op: the jagged x dense kernel (`jagged_out`: the forward with its bias, or
    bwd_dx without) or the jagged x jagged reduce-sum; `dims` the shape keys of its (M, N, K),
    `transposed` the operand it reads transposed."""

    def grid(config: Config, case: Case) -> tuple[int]:
        m, n = (case.shape[key] for key in dims[:2])
        tiles = -(-max(m, 1) // config["BLOCK_M"]) * -(-n // config["BLOCK_N"]) * case.shape["B"]
        return (max(1, min(MAX_PROGRAMS, tiles)),)

    bias = jagged_out and not transposed
    return KernelSpec(
        name=name,
        tunables=TUNABLES,
        outputs=outputs,
        default=default,
        grid=grid,
        tile_bytes=_bias_tiles if bias else _tiles if jagged_out else _reduce_tiles,
        stream_bytes=_stream,
        constraints=(
            _fits("BLOCK_M", dims[0], default),
            _fits("BLOCK_N", dims[1], default),
            _fits("BLOCK_K", dims[2], default),
            _accumulator_registers,
        ),
        dots=_bias_dots if bias else _dots(transposed),
        port_kernel="_jagged_dense_bmm_add_kernel" if jagged_out else "_jagged_bmm_reduce_kernel",
        upstream_kernel="jagged_dense_bmm_broadcast_add_kernel"
        if jagged_out
        else "_jagged_jagged_bmm_reduce_sum",
    )


def within_max_seq_len(case: Case) -> bool:
    """Upstream's contract: no sequence longer than max_seq_len."""
    return max(case.lengths, default=0) <= case.shape["max_seq_len"]


def max_length(offsets: torch.Tensor) -> int:
    return int((offsets[1:] - offsets[:-1]).max()) if offsets.numel() > 1 else 0


class RecsysJaggedOp(OpSpec):
    """What the ops of upstream's `triton_jagged.py` share: a jagged tensor with B sequences of
    lengths within max_seq_len (upstream's contract; its performance cases keep it), cases named
    by their shape, the port's kernels as launchers, upstream's autograd Function on CUDA."""

    lengths_rule = (
        "ops.jagged.skewed_lengths(B, max_seq_len, overflow=1.0): "
        "floor(frac(i * 0.618...)^2 * max_seq_len), none over max_seq_len"
    )
    accuracy_shapes: tuple
    performance_shapes: tuple
    #: Upstream's autograd Function, and which of its backward's results is which gradient.
    upstream_function: str
    upstream_grads: dict[str, int]

    def make_case(self, shape, dtype, lengths, kind="accuracy", offsets=None) -> Case:
        name = "_".join(f"{_LETTERS[k]}{shape[k]}" for k in self.shape_keys)
        name += f"_{SHORT_DTYPE[dtype]}"
        ordered = {k: shape[k] for k in self.shape_keys}
        return Case(self.name, name, ordered, dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        if kind == "accuracy":
            return standard_cases(self, kind, self.accuracy_shapes, ())
        cases = []
        for *values, dtype in self.performance_shapes:
            shape = dict(zip(self.shape_keys, values, strict=True))
            lengths = skewed_lengths(shape["B"], shape["max_seq_len"], overflow=1.0)
            cases.append(self.make_case(shape, dtype, lengths, kind))
        return cases

    def offsets(self, case: Case, device: torch.device) -> Tensors:
        """The inputs every op of the family has: offsets and max_seq_len."""
        return {
            "offsets": case_offsets(case, device),
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
        }

    def generator(self, case: Case, seed: int) -> torch.Generator:
        return torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)

    # -- the port ------------------------------------------------------------------------------
    @abstractmethod
    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        """kernel -> a call of the port's launcher of that kernel (its config, or None: the
        launcher's own pick)."""

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel not in self.launchers():
            raise ValueError(f"unknown kernel {kernel!r}; valid: {', '.join(self.launchers())}")
        return self.launchers()[kernel](inputs, config)

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        outputs: Tensors = {}
        for kernel, launch in self.launchers().items():
            outputs.update(launch(inputs, configs.get(kernel)))
        return outputs

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        configs = configs or {}
        launchers = self.launchers()
        kernels = self.parts[part]
        return lambda: [launchers[k](inputs, configs.get(k)) for k in kernels]

    # -- upstream ------------------------------------------------------------------------------
    @abstractmethod
    def upstream_args(self, inputs: Tensors) -> tuple:
        """The arguments of upstream's Function.forward after ctx."""

    def _runs_upstream(self, inputs: Tensors, case: Case) -> bool:
        """Upstream's kernels go through Triton's GPU autotuner (it times each config on the
        device): CUDA only, and only within its contract (no sequence over max_seq_len)."""
        cuda = inputs["x"].is_cuda
        return self.upstream.missing() is None and cuda and within_max_seq_len(case)

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        if self.upstream.missing() or not within_max_seq_len(case):
            return ()
        return self.output_names

    def _function(self):
        return getattr(self.upstream.load(), self.upstream_function)

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        if not self._runs_upstream(inputs, case):
            return {}
        function, ctx = self._function(), _Ctx()
        out = function.forward(ctx, *self.upstream_args(inputs))
        grads = function.backward(ctx, inputs["dout"])
        return {"out": out, **{name: grads[i] for name, i in self.upstream_grads.items()}}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if not self._runs_upstream(inputs, case):
            return None
        function, args = self._function(), self.upstream_args(inputs)
        if part == "fwd":
            return lambda: function.forward(_Ctx(), *args)
        ctx = _Ctx()
        function.forward(ctx, *args)
        dout = inputs["dout"]
        return lambda: function.backward(ctx, dout)


class JaggedDenseBmmBroadcastAdd(RecsysJaggedOp):
    name = NAME
    summary = (
        "Jagged [sum_L, D] times dense [B, D, T] plus bias [B, T] per sequence -> jagged "
        "[sum_L, T]; fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=(
            "triton_jagged_dense_bmm_broadcast_add",
            "_JaggedDenseBmmBroadcastAddFunction",
        ),
        # From _get_bmm_configs (51) to the end of the Function (648), both kernels between;
        # the entry is at 1247-1257 (the README names each piece's lines).
        lines="51-648",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("B", "max_seq_len", "D", "T")
    input_names = ("x", "y", "bias", "offsets", "max_seq_len", "dout")
    output_names = ("out", "dx", "dy", "dbias")
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES
    upstream_function = "_JaggedDenseBmmBroadcastAddFunction"
    upstream_grads = {"dx": 2, "dy": 3, "dbias": 4}
    parts = {"fwd": ("fwd",), "bwd": ("bwd_dx", "bwd_dy_db")}
    kernels = (
        # out = x [sum_L, D] @ y [B, D, T] + bias [B, T]
        bmm_kernel("fwd", ("max_seq_len", "T", "D"), ("out",), True),
        # dx = dout [sum_L, T] @ y^T [B, T, D]
        bmm_kernel("bwd_dx", ("max_seq_len", "D", "T"), ("dx",), True, "b"),
        # dy = x^T [D, sum_L] @ dout [sum_L, T], dbias = the column sums of dout
        bmm_kernel("bwd_dy_db", ("D", "T", "max_seq_len"), ("dy", "dbias"), False, "a"),
    )

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = self.generator(case, seed)
        b, d, t = (case.shape[k] for k in ("B", "D", "T"))
        rows = total_rows(case)
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "y": torch.randn(b, d, t, generator=gen) / d**0.5,  # out of about unit scale
            "bias": 0.5 * torch.randn(b, t, generator=gen),
            "dout": torch.randn(rows, t, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {**out, **self.offsets(case, device)}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """Per sequence, every row: out = x y + bias, dx = dout y^T, dy = x^T dout, dbias = the
        rows of dout summed; in chunks of sequences (a performance case padded at once would
        take gigabytes in float64)."""
        x, y, bias, dout = (inputs[k].to(compute_dtype) for k in ("x", "y", "bias", "dout"))
        offsets = inputs["offsets"]
        n = max_length(offsets)
        out, dx = x.new_zeros(x.size(0), y.size(2)), torch.zeros_like(x)
        dy, dbias = torch.zeros_like(y), torch.zeros_like(bias)
        for i, j in sequence_chunks(offsets, n * max(y.size(1), y.size(2))):
            first, last = int(offsets[i]), int(offsets[j])
            local = offsets[i : j + 1] - offsets[i]
            xp, _ = pad_rows(x[first:last], local, n)
            gp, _ = pad_rows(dout[first:last], local, n)
            out[first:last] = unpad_rows(
                torch.bmm(xp, y[i:j]) + bias[i:j, None, :], local, last - first
            )
            dx[first:last] = unpad_rows(torch.bmm(gp, y[i:j].transpose(1, 2)), local, last - first)
            dy[i:j] = torch.bmm(xp.transpose(1, 2), gp)
            dbias[i:j] = gp.sum(1)
        return {"out": out, "dx": dx, "dy": dy, "dbias": dbias}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """R rows, y the dense [B, D, T]. fwd: x (R x D), y and the bias read, out (R x T)
        written; 2 R D T flops. bwd: dx = dout y^T reads dout and y and writes dx, dy = x^T dout
        reads x and dout and writes dy and dbias; 4 R D T flops."""
        b, d, t = (case.shape[k] for k in ("B", "D", "T"))
        r, size = total_rows(case), case.torch_dtype.itemsize
        if part == "fwd":
            return (r * d + b * d * t + b * t + r * t) * size, 2 * r * d * t
        return (2 * r * t + b * d * t + 2 * r * d + b * d * t + b * t) * size, 4 * r * d * t

    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        port = load_port(self.name)

        def args(inputs: Tensors) -> tuple:
            return tuple(inputs[k] for k in ("x", "y", "bias", "offsets")) + (
                int(inputs["max_seq_len"]),
            )

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            return {"out": port.jagged_dense_bmm_broadcast_add_fwd(*args(inputs), config=config)}

        def bwd_dx(inputs: Tensors, config: Config | None) -> Tensors:
            return {"dx": port.bwd_dx(*args(inputs), inputs["dout"], config=config)}

        def bwd_dy_db(inputs: Tensors, config: Config | None) -> Tensors:
            dy, dbias = port.bwd_dy_db(*args(inputs), inputs["dout"], config=config)
            return {"dy": dy, "dbias": dbias}

        return {"fwd": fwd, "bwd_dx": bwd_dx, "bwd_dy_db": bwd_dy_db}

    def upstream_args(self, inputs: Tensors) -> tuple:
        x, y, bias, offsets = (inputs[k] for k in ("x", "y", "bias", "offsets"))
        return int(inputs["max_seq_len"]), offsets, x, y, bias


SPEC = JaggedDenseBmmBroadcastAdd()
