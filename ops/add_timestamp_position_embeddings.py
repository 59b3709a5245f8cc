"""add_timestamp_position_embeddings (recsys-examples' Triton
`triton_add_timestamp_positional_embeddings`, HSTU's position encoder with time): each row of a
jagged tensor plus a position embedding (counted back from the sequence's targets, its first
max_contextual_seq_len rows forward) and a timestamp embedding (the row's age against the
sequence's last timestamp, bucketed by sqrt or log of minutes).

Shapes: x [sum_L, D] jagged (upstream: seq_embeddings), pos [K, D], ts [2049, D] (upstream's
num_time_buckets, 2048, is fixed in its launcher: a table of 2049 rows), timestamps [sum_L],
lengths [B] (upstream's seq_lengths, the offsets' differences), num_targets [B]. Per row n of b,
with high = length - num_targets (twice that with interleave_targets) and C =
max_contextual_seq_len:

    p = n                                   if n < C
        min(high - min(n, high) + C, K - 1) else
    t = clamp(int(f(max(T_last - T_n, 1e-6) / 60)), 0, 2048),  f = sqrt or log
    out = x + pos[p] + ts[t]

t is computed in fp32, as upstream's kernel does (a bucket index is a step function: the golden
computes it the same way, and the cases' timestamps stay off the buckets' edges). Backward as
upstream's autograd Function: dx = dout itself (no kernel), dpos and dts the rows of dout summed
per index: upstream sorts the indices (torch.sort) in its forward and sums runs of equal ones
with atomic adds (`_add_embeddings_bwd_kernel`, run once for each table): the op's `bwd`.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .cases import total_rows
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .position_embeddings import (
    UPSTREAM_FILE,
    UPSTREAM_SHA256,
    PositionEmbeddingsOp,
    fits,
    fwd_kernel,
    programs,
)
from .spec import Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "add_timestamp_position_embeddings"
#: Upstream's launcher fixes these (`_AddTimestampPositionEmbeddingsFunction.forward`).
NUM_TIME_BUCKETS, TIME_BUCKET_INCREMENTS = 2048, 60.0

# (B, max_seq_len, D, K, C, lengths): B = 1, a single row, an empty sequence, a sequence longer
# than max_seq_len (the port alone), positions past K, contextual rows (C 4), D not a power of two
# below and above upstream's 64-wide column block.
ACCURACY_SHAPES = (
    (1, 16, 16, 32, 0, (16,)),
    (1, 8, 24, 8, 0, (1,)),
    (4, 16, 20, 12, 4, (0, 5, 16, 23)),
    (3, 40, 100, 64, 4, (40, 0, 33)),
    (2, 24, 130, 16, 0, (24, 7)),
)
# HSTU sizes: 10^5-10^6 rows of D 128-512, 8192 position buckets, no contextual rows (HSTU's
# call).
PERFORMANCE_SHAPES = (
    (512, 1024, 256, 8192, 0, "bfloat16"),
    (256, 4096, 128, 8192, 0, "float16"),
    (1024, 512, 512, 8192, 0, "float32"),
    (2048, 1024, 256, 8192, 0, "bfloat16"),
)


def bwd_default(case: Case) -> Config:
    """The first config of upstream's `_add_embeddings_bwd_configs` (BLOCK 32, 2 stages, 2 warps;
    its autotuner's pick among 27 is a timing on the GPU) with its whole row (next_pow2(D))."""
    return {"BLOCK": 32, "BLOCK_D": next_pow2(case.shape["D"]), "num_warps": 2, "num_stages": 2}


def _bwd_grid(config: Config, case: Case) -> tuple[int]:
    """Upstream's grid (rows / BLOCK,), here times D's column blocks; one launch a table."""
    rows = -(-max(total_rows(case), 1) // config["BLOCK"])
    return programs(rows * -(-case.shape["D"] // config["BLOCK_D"]))


def _fwd_tiles(config: Config, case: Case) -> int:
    """x's tile and the two gathered tiles, each in its dtype and in fp32; the indices."""
    e, bn, bd = case.torch_dtype.itemsize, config["BLOCK_N"], config["BLOCK_D"]
    return 3 * bn * bd * (e + 4) + 24 * bn


def _fwd_stream(config: Config, case: Case) -> int:
    return 3 * case.torch_dtype.itemsize * config["BLOCK_N"] * config["BLOCK_D"]


def _bwd_tiles(config: Config, case: Case) -> int:
    """One row of dout in its dtype and in fp32, the fp32 run sum."""
    return config["BLOCK_D"] * (case.torch_dtype.itemsize + 8)


def _bwd_stream(config: Config, case: Case) -> int:
    return case.torch_dtype.itemsize * config["BLOCK_D"]


FWD = fwd_kernel(
    _fwd_tiles,
    _fwd_stream,
    "_add_timestamp_position_fwd_kernel",
    "_add_timestamp_position_embeddings_kernel",
)
BWD = KernelSpec(
    name="bwd",
    tunables=(
        # sorted entries a block; upstream's name
        Tunable("BLOCK", pow2_range(8, 256), role=Role.LAUNCHER_ARGUMENT),
        Tunable("BLOCK_D", pow2_range(16, 1024)),
        Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION),
        Tunable("num_stages", (2, 3, 4), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("dpos", "dts"),
    default=bwd_default,
    grid=_bwd_grid,
    tile_bytes=_bwd_tiles,
    stream_bytes=_bwd_stream,
    constraints=(fits("BLOCK_D", "D", bwd_default),),
    port_kernel="_add_embeddings_bwd_kernel",
    upstream_kernel="_add_embeddings_bwd_kernel",
)


def indices(inputs: Tensors, interleave: bool = False, fn: str = "sqrt") -> tuple:
    """(position, time bucket) of every row, as upstream's forward computes them (the bucket in
    fp32)."""
    offsets, lengths = inputs["offsets"], inputs["lengths"]
    counts = offsets[1:] - offsets[:-1]
    seq = torch.repeat_interleave(torch.arange(counts.numel(), device=offsets.device), counts)
    n = torch.arange(seq.numel(), device=offsets.device) - offsets[seq]
    targets = inputs["num_targets"]
    high = lengths[seq] - (0 if targets is None else (2 if interleave else 1) * targets[seq])
    contextual, k = int(inputs["max_contextual_seq_len"]), inputs["pos"].size(0)
    position = torch.clamp(high - torch.minimum(n, high) + contextual, max=k - 1)
    position = torch.where(n < contextual, n, position)
    stamps = inputs["timestamps"]
    delta = (stamps[offsets[seq + 1] - 1] - stamps).to(torch.float32)
    minutes = torch.clamp(delta, min=1e-6) / TIME_BUCKET_INCREMENTS
    bucket = (torch.log(minutes) if fn == "log" else torch.sqrt(minutes)).to(torch.int32)
    return position, torch.clamp(bucket, 0, NUM_TIME_BUCKETS).long()


class AddTimestampPositionEmbeddings(PositionEmbeddingsOp):
    name = NAME
    summary = (
        "Jagged [sum_L, D] plus position [K, D] and timestamp [2049, D] embeddings of each "
        "row; fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=(
            "triton_add_timestamp_positional_embeddings",
            "_AddTimestampPositionEmbeddingsFunction",
        ),
        # From the kernel's autotune decorator (304) to the entry's end (699); the README names
        # each piece's lines (the configs at 58-72 are the other op's too).
        lines="304-699",
        source=RECSYS_EXAMPLES,
    )
    shape_keys = ("B", "max_seq_len", "D", "K", "C")
    input_names = ("x", "offsets", "pos", "ts", "timestamps", "max_seq_len",
                   "max_contextual_seq_len", "lengths", "num_targets", "dout")  # fmt: skip
    #: dx = dout (upstream's backward returns it as it is): no kernel, no output of its own.
    output_names = ("out", "dpos", "dts")
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES
    upstream_function = "_AddTimestampPositionEmbeddingsFunction"
    upstream_grads = {"dpos": 2, "dts": 3}
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}
    kernels = (FWD, BWD)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        """x, dout normal, the tables at half that scale; per sequence num_targets in [0, length];
        timestamps in seconds, ascending, whole minutes apart, the last (the query's) 30 s past a
        minute: every age is m + 0.5 minutes, far from a sqrt or log bucket's edge."""
        gen = self.generator(case, seed)
        d, k = case.shape["D"], case.shape["K"]
        rows = total_rows(case)
        tensors = {
            "x": torch.randn(rows, d, generator=gen),
            "pos": 0.5 * torch.randn(k, d, generator=gen),
            "ts": 0.5 * torch.randn(NUM_TIME_BUCKETS + 1, d, generator=gen),
            "dout": torch.randn(rows, d, generator=gen),
        }
        lengths = torch.tensor(case.lengths, dtype=torch.int64)
        targets = (torch.rand(lengths.numel(), generator=gen) * (lengths + 1)).long()
        minutes = torch.randint(0, 200000, (rows,), generator=gen)
        stamps = []
        for first, length in zip(torch.cumsum(lengths, 0) - lengths, lengths.tolist(), strict=True):
            seq = torch.sort(minutes[first : first + length]).values * 60
            if length:
                seq[-1] = seq[-1] + 30
            stamps.append(seq)
        out = {name: t.to(case.torch_dtype).to(device) for name, t in tensors.items()}
        return {
            **out,
            **self.offsets(case, device),
            "timestamps": torch.cat(stamps).to(device) if stamps else torch.zeros(0).long(),
            "max_contextual_seq_len": torch.tensor(case.shape["C"]),
            "lengths": lengths.to(device),
            "num_targets": targets.to(device),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """out = x + pos[p] + ts[t], dpos and dts the rows of dout summed per index."""
        x, pos, ts, dout = (inputs[k].to(compute_dtype) for k in ("x", "pos", "ts", "dout"))
        position, bucket = indices(inputs)
        return {
            "out": x + pos[position] + ts[bucket],
            "dpos": torch.zeros_like(pos).index_add_(0, position, dout),
            "dts": torch.zeros_like(ts).index_add_(0, bucket, dout),
        }

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """R rows of D. fwd: x read, two table rows gathered per row, out written; 2 R D flops.
        bwd: dout read twice (once a table), both tables' gradients written; 2 R D flops."""
        d, k = case.shape["D"], case.shape["K"]
        r, size = total_rows(case), case.torch_dtype.itemsize
        if part == "fwd":
            return 4 * r * d * size, 2 * r * d
        return (2 * r + k + NUM_TIME_BUCKETS + 1) * d * size, 2 * r * d

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        """bwd: the sorted indices its forward leaves (upstream's torch.sort), from the inputs."""
        if kernel == "fwd":
            return inputs
        return {**inputs, **self._sorted(inputs)}

    def _sorted(self, inputs: Tensors) -> Tensors:
        position, bucket = (i.to(torch.int32) for i in indices(inputs))
        pos_keys, pos_values = torch.sort(position)
        ts_keys, ts_values = torch.sort(bucket)
        return {"pos_keys": pos_keys, "pos_values": pos_values, "ts_keys": ts_keys,
                "ts_values": ts_values}  # fmt: skip

    def launchers(self) -> dict[str, Callable[[Tensors, Config | None], Tensors]]:
        port = load_port(self.name)

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            out, _, _ = port.add_timestamp_position_embeddings_fwd(
                inputs["x"], inputs["offsets"], inputs["pos"], inputs["ts"],
                inputs["timestamps"], int(inputs["max_seq_len"]),
                int(inputs["max_contextual_seq_len"]), inputs["lengths"], inputs["num_targets"],
                False, "sqrt", config=config,
            )  # fmt: skip
            return {"out": out}

        def bwd(inputs: Tensors, config: Config | None) -> Tensors:
            given = inputs if "pos_keys" in inputs else {**inputs, **self._sorted(inputs)}
            dpos, dts = port.add_timestamp_position_embeddings_bwd(
                inputs["dout"], given["pos_keys"], given["pos_values"], given["ts_keys"],
                given["ts_values"], inputs["pos"], inputs["ts"], inputs["lengths"].numel(),
                int(inputs["max_seq_len"]), int(inputs["max_contextual_seq_len"]), config=config,
            )  # fmt: skip
            return {"dpos": dpos, "dts": dts}

        return {"fwd": fwd, "bwd": bwd}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        """bwd: the sums alone, its forward's sort done beforehand (upstream's is in its
        forward)."""
        configs = configs or {}
        launch = self.launchers()[part]
        given = inputs if part == "fwd" else {**inputs, **self._sorted(inputs)}
        return lambda: launch(given, configs.get(part))

    def upstream_args(self, inputs: Tensors) -> tuple:
        """_AddTimestampPositionEmbeddingsFunction.forward(seq_embeddings, seq_offsets,
        pos_embeddings, ts_embeddings, timestamps, max_seq_len, max_contextual_seq_len,
        seq_lengths, num_targets, interleave_targets, time_bucket_fn)."""
        return (inputs["x"], inputs["offsets"], inputs["pos"], inputs["ts"], inputs["timestamps"],
                int(inputs["max_seq_len"]), int(inputs["max_contextual_seq_len"]),
                inputs["lengths"], inputs["num_targets"], False, "sqrt")  # fmt: skip


SPEC = AddTimestampPositionEmbeddings()
