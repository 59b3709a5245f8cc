"""batched_dense_vec_jagged_2d_matmul (FBGEMM Triton `batched_dense_vec_jagged_2d_matmul`): per
sequence b and head h, a dense row vector times the sequence's rows of that head.

dense [B * H, max_seq_len], values [sum_L, H * D] (sequence b's rows at offsets[b], head h's
columns h * D .. h * D + D), out [B * H, D]:
out[b * H + h, :] = sum_{l < min(L_b, max_seq_len)} dense[b * H + h, l] * values[offsets[b] + l, h * D:(h + 1) * D].
Rows past max_seq_len are left out (upstream's truncation). No backward upstream.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import torch

from .cases import case_offsets, effective_lengths, standard_cases, total_rows
from .jagged_copy import UPSTREAM_FILE
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
    next_pow2,
    pow2_range,
)
from .tunable import PROGRAMS, Role, Tunable

NAME = "batched_dense_vec_jagged_2d_matmul"
#: Upstream's thread_block_col_size.
UPSTREAM_BLOCK = 32

# (B, max_seq_len, H, D, lengths): B=1, empty sequences, sequences past max_seq_len, D not a
# power of two, several heads.
ACCURACY_SHAPES = (
    (1, 8, 1, 16, (8,)),
    (4, 16, 2, 40, (0, 5, 16, 23)),
    (6, 33, 3, 7, (33, 0, 50, 1, 32, 0)),
)
PERFORMANCE_SHAPES = (
    (1024, 256, 4, 64, "float16"),
    (2048, 512, 2, 128, "bfloat16"),
    (512, 1024, 8, 64, "float32"),
    (256, 4096, 4, 128, "bfloat16"),
)


def _default(case: Case) -> Config:
    """Upstream's launch: a row of values at a time (BLOCK_L 1), 32 columns, num_warps 4."""
    return {"BLOCK_L": 1, "BLOCK_D": UPSTREAM_BLOCK, "num_warps": 4}


def _grid(config: Config, case: Case) -> tuple[int]:
    """One program per (column block, head, sequence)."""
    b, h, d = (case.shape[k] for k in ("B", "H", "D"))
    return (b * h * -(-d // config["BLOCK_D"]),)


def _tile_bytes(config: Config, case: Case) -> int:
    """dense's BLOCK_L values and the values' BLOCK_L x BLOCK_D tile in the dtype, their fp32
    products, the fp32 accumulator."""
    bl, bd, size = config["BLOCK_L"], config["BLOCK_D"], case.torch_dtype.itemsize
    return bl * (1 + bd) * size + 4 * bl * bd + 4 * bd


def _stream_bytes(config: Config, case: Case) -> int:
    return config["BLOCK_L"] * (1 + config["BLOCK_D"]) * case.torch_dtype.itemsize


FWD = KernelSpec(
    name="fwd",
    tunables=(
        Tunable("BLOCK_L", pow2_range(1, 64)),
        Tunable("BLOCK_D", pow2_range(16, 256)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("out",),
    default=_default,
    grid=_grid,
    tile_bytes=_tile_bytes,
    stream_bytes=_stream_bytes,
    constraints=(
        # A block over its dimension padded only computes padding; upstream's 32 stays allowed.
        BlockFits("BLOCK_D", lambda c: max(UPSTREAM_BLOCK, next_pow2(c.shape["D"])), "D"),
        BlockFits("BLOCK_L", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
    ),
    port_kernel="_dense_vec_jagged_matmul_kernel",
    upstream_kernel="triton_batched_dense_vec_jagged_2d_matmul",
)


class BatchedDenseVecJagged2dMatmul(OpSpec):
    name = NAME
    summary = "Per sequence and head, a dense row vector times the sequence's rows (no backward)"
    upstream = dataclasses.replace(
        UPSTREAM_FILE, functions=("batched_dense_vec_jagged_2d_matmul",), lines="158-266"
    )
    shape_keys = ("B", "max_seq_len", "H", "D")
    input_names = ("dense", "values", "offsets")
    output_names = ("out",)
    kernels = (FWD,)

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, h, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_h{h}_d{d}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        b, n, h, d = (case.shape[k] for k in self.shape_keys)
        offsets = case_offsets(case, device)
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        rows = max(0, int(offsets[-1]))
        tensors = {
            "dense": torch.randn(b * h, n, generator=gen),
            "values": torch.randn(rows, h * d, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {**out, "offsets": offsets}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        dense, values = inputs["dense"].to(compute_dtype), inputs["values"].to(compute_dtype)
        offsets = inputs["offsets"].cpu()
        batch = offsets.numel() - 1
        heads = dense.size(0) // max(batch, 1)
        d = values.size(1) // max(heads, 1)
        n = dense.size(1)
        out = torch.zeros(dense.size(0), d, dtype=compute_dtype, device=dense.device)
        for b in range(batch):
            begin = int(offsets[b])
            kept = min(int(offsets[b + 1]) - begin, n)
            rows = values[begin : begin + kept].reshape(kept, heads, d)
            vectors = dense[b * heads : (b + 1) * heads, :kept]
            out[b * heads : (b + 1) * heads] = torch.einsum("hl,lhd->hd", vectors, rows)
        return {"out": out}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """The E = sum min(L, max_seq_len) rows of values used (H * D each) and of dense (H
        each) read, out [B * H, D] written; 2 flops a used value."""
        b, _, h, d = (case.shape[k] for k in self.shape_keys)
        used = sum(effective_lengths(case))
        size = case.torch_dtype.itemsize
        return (used * h * (d + 1) + b * h * d) * size + (b + 1) * 8, 2 * used * h * d

    def jagged_rows(self, case: Case) -> int:
        return total_rows(case)

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel != "fwd":
            raise ValueError(f"unknown kernel {kernel!r}; valid: fwd")
        port = load_port(NAME)
        out = port.batched_dense_vec_jagged_2d_matmul(
            inputs["dense"], inputs["values"], inputs["offsets"], config=config
        )
        return {"out": out}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        return self.launch("fwd", inputs, (configs or {}).get("fwd"))

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        return lambda: self.run_port(inputs, configs)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def _upstream(self, inputs: Tensors) -> torch.Tensor:
        up = self.upstream.load()
        dense, values, offsets = (inputs[k] for k in self.input_names)
        if values.is_cuda:
            return up.batched_dense_vec_jagged_2d_matmul(dense, values, offsets)
        # Upstream's wrapper allocates on "cuda"; elsewhere launch its kernel exactly as it does.
        batch = offsets.size(0) - 1
        heads = dense.size(0) // batch
        d = values.size(-1) // heads
        out = torch.empty((batch * heads, d), device=values.device, dtype=values.dtype)
        grid = (batch * heads * -(-d // UPSTREAM_BLOCK),)
        up.triton_batched_dense_vec_jagged_2d_matmul[grid](
            values, dense, offsets, UPSTREAM_BLOCK, dense.stride(0), values.stride(0), d, heads,
            out,
        )  # fmt: skip
        return out

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        return {"out": self._upstream(inputs)}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        return lambda: self._upstream(inputs)


SPEC = BatchedDenseVecJagged2dMatmul()
