"""What concat_2d_jagged and split_2d_jagged share (recsys-examples' `triton_jagged.py`): shapes,
cases, the golden, the two kernels' tunables and tile models, the upstream file and the calls.

The two ops are each other's inverse, and each one's backward is the other's forward: concat
joins two 2-D jagged tensors a [sum_La, D] and b [sum_Lb, D] sequence by sequence into
[sum_La + sum_Lb, D], sequence z being b's first `prefix` rows, all of a's rows, then b's other
rows (upstream's `n_prefix_from_right`; 0: a then b); split cuts such a tensor back into a and b.
Both ports hold both kernels (an ATK folder runs alone), the same source in each: `join` (the
concat kernel) and `part` (the split kernel). A case's `lengths` are those of the joined
sequences; `split_lengths` cuts each into a's and b's.

Upstream launches one program per (row, sequence) of a grid (max_seq_len, B), each copying one
row of D (BLOCK_D = next_pow2(D)). The ports walk tiles of BLOCK_N rows of one sequence with
NUM_PROGRAMS programs (an Ascend launch takes at most 65535 blocks; upstream's 2 * 10^6 of a
performance case do not fit), and copy a tile's columns BLOCK_D at a time.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .jagged import golden_points, offsets_from_lengths, skewed_lengths, user_lengths
from .norm import _Context, fits_registers
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
    canonical_dtype,
    next_pow2,
    pow2_range,
)
from .tunable import Role, Tunable

UPSTREAM_FILE = Upstream(
    file="examples/commons/ops/triton_ops/triton_jagged.py",
    sha256="bde10fce7c387b0751a274b0625b6ec9f0cb717087c9586a3b31e8e6fe8076ec",
    functions=(),
    lines="",
    source=RECSYS_EXAMPLES,
)
#: The most programs of a launch: an Ascend launch over 65535 blocks fails.
MAX_NUM_PROGRAMS = 32768
#: The widest column block; a wider row is copied BLOCK_D columns at a time.
MAX_BLOCK_D = 16384

# (B, max_seq_len, D, prefix, joined lengths), and the (a, b) lengths `split_lengths` makes of
# them: a single row (1, 0); empty sequences, of both (0, 0), of b (3, 0) and of a (0, 5), a
# sequence of max_seq_len rows, D not a power of two; b's prefix of 2 rows, a sequence shorter
# than it (0, 1), D not a multiple of a vector; no rows at all; D of one element; a longer
# sequence (43, 27); D above 8192 (over one block in the tests' variants). Small: the
# interpreter runs every row of max_seq_len as a program.
ACCURACY_SHAPES = (
    (1, 8, 16, 0, (1,)),
    (5, 12, 40, 0, (0, 7, 3, 12, 5)),
    (6, 20, 7, 2, (12, 5, 20, 1, 17, 2)),
    (2, 4, 16, 0, (0, 0)),
    (3, 5, 1, 1, (3, 4, 1)),
    (1, 70, 48, 0, (70,)),
    (1, 2, 9000, 0, (2,)),
)
# HSTU sizes: 10^5-10^6 rows in all, D 256-1024; one case with a contextual prefix.
PERFORMANCE_SHAPES = (
    (256, 2048, 512, 0, "bfloat16"),
    (512, 1024, 256, 16, "float16"),
    (1024, 2048, 256, 0, "float32"),
    (128, 4096, 1024, 0, "bfloat16"),
)
LENGTHS_RULE = (
    "joined lengths ops.jagged.skewed_lengths(B, max_seq_len, overflow=1.0): floor(frac(i * "
    "0.618...)^2 * max_seq_len); of each, ops.concat_split.split_lengths gives a "
    "round(frac(i * 0.618...) * (L - prefix)) rows, b the others (all L where L < prefix)"
)


def split_lengths(lengths: tuple[int, ...], prefix: int) -> tuple[list[int], list[int]]:
    """(a's lengths, b's lengths) of joined sequences of `lengths`: of sequence i's L rows, b has
    `prefix` and a round(u_i * (L - prefix)) of the others (u_i = frac(i * golden ratio), low
    discrepancy: every share from none to all), b the rest; a sequence shorter than the prefix is
    all b (a's rows after b's prefix would not be a's)."""
    points = golden_points(len(lengths))
    a = [
        int(u * (n - prefix) + 0.5) if n >= prefix else 0
        for u, n in zip(points, lengths, strict=True)
    ]
    return a, [n - m for n, m in zip(lengths, a, strict=True)]


# -- the golden: sequence-wise joins and parts, in torch ----------------------------------------
def _pieces(offsets_a: torch.Tensor, offsets_b: torch.Tensor, prefix: int):
    """Per sequence: (a's rows, b's prefix rows, b's other rows) as index ranges."""
    oa, ob = offsets_a.tolist(), offsets_b.tolist()
    for z in range(len(oa) - 1):
        cut = ob[z] + min(prefix, ob[z + 1] - ob[z])
        yield range(oa[z], oa[z + 1]), range(ob[z], cut), range(cut, ob[z + 1])


def join_index(offsets_a, offsets_b, prefix: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(from_a, row): for each row of the concatenation, whether it comes from a, and its row
    there."""
    flags: list[bool] = []
    rows: list[int] = []
    for a, head, tail in _pieces(offsets_a, offsets_b, prefix):
        for source, flag in ((head, False), (a, True), (tail, False)):
            flags += [flag] * len(source)
            rows += list(source)
    return torch.tensor(flags, dtype=torch.bool), torch.tensor(rows, dtype=torch.int64)


def join(a: torch.Tensor, b: torch.Tensor, offsets_a, offsets_b, prefix: int) -> torch.Tensor:
    """Sequence z of the result: b's first `prefix` rows, a's rows, b's other rows."""
    from_a, rows = (t.to(a.device) for t in join_index(offsets_a, offsets_b, prefix))
    out = a.new_empty(len(rows), a.size(-1))
    out[from_a] = a[rows[from_a]]
    out[~from_a] = b[rows[~from_a]]
    return out


def part(joined: torch.Tensor, offsets_a, offsets_b, prefix: int, rows_a: int, rows_b: int):
    """The inverse of `join`: (a, b)."""
    from_a, rows = (t.to(joined.device) for t in join_index(offsets_a, offsets_b, prefix))
    a = joined.new_zeros(rows_a, joined.size(-1))
    b = joined.new_zeros(rows_b, joined.size(-1))
    a[rows[from_a]] = joined[from_a]
    b[rows[~from_a]] = joined[~from_a]
    return a, b


# -- the kernels ----------------------------------------------------------------------------
def block_d(case: Case) -> int:
    """Upstream's BLOCK_D, the whole row padded, here at most MAX_BLOCK_D."""
    return min(next_pow2(case.shape["D"]), MAX_BLOCK_D)


def tiles(config: Config, case: Case) -> int:
    """Tiles of BLOCK_N rows of one sequence: upstream's grid of rows, in blocks."""
    return case.shape["B"] * -(-case.shape["max_seq_len"] // config["BLOCK_N"])


def programs(config: Config, case: Case) -> int:
    return max(1, min(config["NUM_PROGRAMS"], tiles(config, case)))


def default(case: Case) -> Config:
    """Upstream's launch: one row per program (grid (max_seq_len, B), here at most 32768
    programs), the whole row in one block, Triton's default of 4 warps (upstream names none)."""
    return {
        "BLOCK_N": 1,
        "BLOCK_D": block_d(case),
        "NUM_PROGRAMS": MAX_NUM_PROGRAMS,
        "num_warps": 4,
    }


def _tile_bytes(config: Config, case: Case) -> int:
    # One [BLOCK_N, BLOCK_D] tile in the dtype (the three row ranges of a tile are copied one
    # after another), and the int64 source and destination row offsets.
    return config["BLOCK_N"] * (config["BLOCK_D"] * case.torch_dtype.itemsize + 16)


def _stream_bytes(config: Config, case: Case) -> int:
    return config["BLOCK_N"] * config["BLOCK_D"] * case.torch_dtype.itemsize


def _grid(config: Config, case: Case) -> tuple[int]:
    return (programs(config, case),)


#: The most elements of one Triton tensor, TRITON_MAX_TENSOR_NUMEL (triton 3.9 triton/_utils.py,
#: triton-ascend 3.2.0 triton/language/_utils.py): a larger tile does not compile.
MAX_TENSOR_NUMEL = 1048576


def fits_one_tensor(config: Config, case: Case, limits) -> str | None:
    elements = config["BLOCK_N"] * config["BLOCK_D"]
    if elements > MAX_TENSOR_NUMEL:
        return (
            f"BLOCK_N x BLOCK_D = {elements} elements, over Triton's {MAX_TENSOR_NUMEL} of a "
            "tensor (TRITON_MAX_TENSOR_NUMEL)"
        )
    return None


COPY_TUNABLES = (
    Tunable("BLOCK_N", pow2_range(1, 128)),
    Tunable("BLOCK_D", pow2_range(1, MAX_BLOCK_D)),
    Tunable("NUM_PROGRAMS", pow2_range(16, MAX_NUM_PROGRAMS), role=Role.LAUNCHER_ARGUMENT),
    Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)
#: The kernels' specs but their names: `kernel(...)` completes one.
_COPY = dict(
    tunables=COPY_TUNABLES,
    default=default,
    grid=_grid,
    tile_bytes=_tile_bytes,
    stream_bytes=_stream_bytes,
    constraints=(
        BlockFits("BLOCK_N", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
        BlockFits("BLOCK_D", block_d, "D"),
        fits_one_tensor,
        fits_registers,
    ),
)
#: (port kernel, upstream kernels) of each direction: upstream launches a kernel without and one
#: with b's prefix rows, both calling one jit helper (`..._w_prefix`); the port's one kernel
#: does both.
PORT_KERNELS = {
    "join": ("_concat_2d_jagged_kernel", ("concat_2D_jagged", "concat_2D_jagged_jagged_w_prefix")),
    "part": ("_split_2d_jagged_kernel", ("split_2D_jagged", "split_2D_jagged_jagged_w_prefix")),
}


def kernel(name: str, direction: str, outputs: tuple[str, ...]) -> KernelSpec:
    port, (upstream, *variants) = PORT_KERNELS[direction]
    return KernelSpec(
        name=name, outputs=outputs, port_kernel=port, upstream_kernel=upstream,
        upstream_variants=tuple(variants), **_COPY,
    )  # fmt: skip


class ConcatSplitOp(OpSpec):
    """A concat or a split of 2-D jagged tensors, forward and backward (the other one).

    Subclasses name the tensors, give the reference and map kernels to the port's launchers."""

    shape_keys = ("B", "max_seq_len", "D", "prefix")
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}
    #: upstream's autograd Function and the port's.
    upstream_function: str
    lengths_rule = LENGTHS_RULE
    #: The rounding-free copies come out exact: any error is a wrong row.
    tolerance = {"float32": 0.0, "float16": 0.0, "bfloat16": 0.0}

    # -- cases ---------------------------------------------------------------------------------
    def make_case(self, shape, dtype, lengths, kind="accuracy", offsets=None) -> Case:
        b, n, d, p = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_p{p}_{SHORT_DTYPE[dtype]}"
        ordered = {k: shape[k] for k in self.shape_keys}
        return Case(self.name, name, ordered, dtype, tuple(lengths), kind)

    def cases(self, kind: CaseKind) -> list[Case]:
        keys = self.shape_keys
        if kind == "accuracy":
            return [
                self.make_case(dict(zip(keys, values, strict=True)), dtype, lengths)
                for *values, lengths in ACCURACY_SHAPES
                for dtype in self.dtypes
            ]
        return [
            self.make_case(dict(zip(keys, values, strict=True)), dtype,
                           skewed_lengths(values[0], values[1], overflow=1.0), kind)
            for *values, dtype in PERFORMANCE_SHAPES
        ]  # fmt: skip

    def case_from_shape(self, shape: dict[str, int], dtype: str, offsets: list[int] | None) -> Case:
        """Offsets, where given, are those of the joined sequences (a and b follow
        `split_lengths`); else their lengths are the built-in performance cases' skew."""
        if sorted(shape) != sorted(self.shape_keys):
            raise ValueError(f"{self.name} shapes take exactly {', '.join(self.shape_keys)}")
        b, n, d, p = (shape[k] for k in self.shape_keys)
        if b < 1 or n < 1 or d < 1 or not 0 <= p <= n:
            raise ValueError(
                f"{self.name} shapes need B, max_seq_len, D >= 1 and 0 <= prefix <= max_seq_len"
            )
        lengths, _ = user_lengths(b, offsets, skewed_lengths(b, n, overflow=1.0))
        if min(lengths) < 0:
            raise ValueError("offsets must be non-decreasing (a and b are cut from their lengths)")
        return self.make_case(shape, canonical_dtype(dtype), lengths)

    # -- data ----------------------------------------------------------------------------------
    #: The op's names of a, b and their concatenation ("joined") among its inputs.
    tensor_names: dict[str, str]

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        """Offsets of a and b; random a, b or their concatenation (as the op takes them: its
        input and the gradient of its output); host scalars."""
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        d = case.shape["D"]
        la, lb = split_lengths(case.lengths, case.shape["prefix"])
        rows_a, rows_b = sum(la), sum(lb)

        def values(rows: int) -> torch.Tensor:
            return torch.randn(rows, d, generator=gen).to(case.torch_dtype).to(device)

        return {
            "offsets_a": offsets_from_lengths(la, device),
            "offsets_b": offsets_from_lengths(lb, device),
            **{
                self.tensor_names[k]: values(rows)
                for k, rows in (("a", rows_a), ("b", rows_b), ("joined", rows_a + rows_b))
            },
            # Host values: launches never read offsets[-1] from the device.
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
            "prefix": torch.tensor(case.shape["prefix"]),
            "rows_a": torch.tensor(rows_a),
            "rows_b": torch.tensor(rows_b),
        }

    @staticmethod
    def _sizes(inputs: Tensors) -> tuple[int, int, int, int]:
        """(max_seq_len, prefix, rows of a, rows of b), host values."""
        return tuple(int(inputs[k]) for k in ("max_seq_len", "prefix", "rows_a", "rows_b"))  # type: ignore[return-value]

    def _join(self, a, b, inputs: Tensors, compute_dtype=None) -> torch.Tensor:
        _, prefix, _, _ = self._sizes(inputs)
        cast = (lambda t: t.to(compute_dtype)) if compute_dtype else (lambda t: t)
        return join(cast(a), cast(b), inputs["offsets_a"].cpu(), inputs["offsets_b"].cpu(), prefix)

    def _part(self, joined, inputs: Tensors, compute_dtype=None):
        _, prefix, rows_a, rows_b = self._sizes(inputs)
        joined = joined.to(compute_dtype) if compute_dtype else joined
        return part(joined, inputs["offsets_a"].cpu(), inputs["offsets_b"].cpu(), prefix, rows_a,
                    rows_b)  # fmt: skip

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """Every row read once and written once; no flops (a copy)."""
        return 2 * sum(case.lengths) * case.shape["D"] * case.torch_dtype.itemsize, 0

    # -- the port ------------------------------------------------------------------------------
    def port_concat(self, a, b, inputs: Tensors, config: Config | None) -> torch.Tensor:
        """The port's concat launcher: its kernel runs with `config` (None: the one it picks)."""
        max_seq_len, prefix, _, _ = self._sizes(inputs)
        return load_port(self.name).concat_2d_jagged_fwd(
            max_seq_len, a, b, inputs["offsets_a"], inputs["offsets_b"], False, prefix,
            config=config,
        )  # fmt: skip

    def port_split(self, joined, inputs: Tensors, config: Config | None):
        """The port's split launcher: (a, b)."""
        max_seq_len, prefix, rows_a, rows_b = self._sizes(inputs)
        return load_port(self.name).split_2d_jagged_fwd(
            joined, max_seq_len, inputs["offsets_a"], inputs["offsets_b"], 0, prefix, rows_a,
            rows_b, config=config,
        )  # fmt: skip

    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        """kernel -> a call of the port's launcher of that kernel on the op's inputs."""
        raise NotImplementedError(self.name)

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        return self.launchers()[self.kernel(kernel).name](inputs, config)

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        out: Tensors = {}
        for name, launch in self.launchers().items():
            out.update(launch(inputs, configs.get(name)))
        return out

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        launch, config = self.launchers()[part], (configs or {}).get(part)
        return lambda: launch(inputs, config)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return () if self.upstream.missing() else self.output_names

    def upstream_args(self, inputs: Tensors) -> tuple:
        """The arguments of upstream's Function.forward after ctx."""
        raise NotImplementedError(self.name)

    def upstream_grads(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        """What upstream's Function.backward takes after ctx."""
        raise NotImplementedError(self.name)

    def upstream_result(self, forward, backward) -> Tensors:
        """The op's outputs from upstream's forward and backward results."""
        raise NotImplementedError(self.name)

    def _forward(self, inputs: Tensors):
        function = getattr(self.upstream.load(), self.upstream_function)
        ctx = _Context()
        return function, ctx, function.forward(ctx, *self.upstream_args(inputs))

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        """Upstream's autograd Function, forward and backward, called as autograd calls them
        (they run in the interpreter too); nothing where upstream is missing."""
        if self.upstream.missing():
            return {}
        function, ctx, forward = self._forward(inputs)
        return self.upstream_result(forward, function.backward(ctx, *self.upstream_grads(inputs)))

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if self.upstream.missing():
            return None
        if part == "fwd":
            return lambda: self._forward(inputs)[2]
        function, ctx, _ = self._forward(inputs)
        grads = self.upstream_grads(inputs)
        return lambda: function.backward(ctx, *grads)
