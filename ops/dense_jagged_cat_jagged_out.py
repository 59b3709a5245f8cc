"""dense_jagged_cat_jagged_out (FBGEMM SLL `dense_jagged_cat_jagged_out`): prepend a dense value
to each sequence of a 1-D jagged tensor.

With b's offsets o_b and lengths L_b (B sequences), c has sum_L + B values and offsets
c_offsets[i] = o_b[i] + i; c[c_offsets[i]] = a[i], then c[c_offsets[i] + 1 + l] = b[o_b[i] + l]
for l < min(L_i, max_seq_len), and 0 for max_seq_len <= l < L_i: upstream keeps each sequence's
full length in c but copies at most max_seq_len of its values. No backward upstream.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .cases import case_offsets, effective_lengths, total_rows
from .jagged1d import Jagged1dOp
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "dense_jagged_cat_jagged_out"
#: Upstream's BLOCK_SIZE (the values one step of its loop over a sequence copies).
UPSTREAM_BLOCK = 128

# (B, max_seq_len, lengths): B=1, empty sequences, sequences past max_seq_len (their tail zero),
# a sequence of several upstream blocks.
ACCURACY_SHAPES = (
    (1, 8, (8,)),
    (4, 16, (0, 5, 16, 23)),
    (6, 33, (33, 0, 50, 1, 32, 0)),
    (3, 200, (150, 0, 260)),
)
PERFORMANCE_SHAPES = (
    (2048, 256, "float16"),
    (1024, 1024, "float32"),
    (2048, 4096, "bfloat16"),
    (512, 4096, "float32"),
)


def _default(case: Case) -> Config:
    return {"BLOCK_SIZE": UPSTREAM_BLOCK, "num_warps": 4}


def _blocks(config: Config, case: Case) -> int:
    return max(1, -(-case.shape["max_seq_len"] // config["BLOCK_SIZE"]))


def _grid(config: Config, case: Case) -> tuple[int]:
    """One program per (block of max_seq_len values, sequence) tile, on one axis."""
    return (_blocks(config, case) * case.shape["B"],)


def _tile_bytes(config: Config, case: Case) -> int:
    return config["BLOCK_SIZE"] * case.torch_dtype.itemsize


FWD = KernelSpec(
    name="fwd",
    tunables=(
        Tunable("BLOCK_SIZE", pow2_range(16, 4096)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("c", "c_offsets"),
    default=_default,
    grid=_grid,
    tile_bytes=_tile_bytes,
    stream_bytes=_tile_bytes,
    constraints=(
        # A block over max_seq_len padded only copies zeros; upstream's 128 stays allowed.
        BlockFits(
            "BLOCK_SIZE",
            lambda c: max(UPSTREAM_BLOCK, next_pow2(c.shape["max_seq_len"])),
            "max_seq_len",
        ),
    ),  # fmt: skip
    port_kernel="_dense_jagged_cat_kernel",
    upstream_kernel="dense_jagged_cat_jagged_out_kernel",
)


class DenseJaggedCatJaggedOut(Jagged1dOp):
    name = NAME
    summary = "Prepend a dense value to each sequence of a 1-D jagged tensor, jagged output"
    upstream = Upstream(
        file="sll/triton/triton_dense_jagged_cat_jagged_out.py",
        sha256="27da8eaa3349ef62d406ab3ea4623dc2b173cf3069b19e5fcd88e07ca7366216",
        functions=("dense_jagged_cat_jagged_out",),
        lines="14-72",
    )
    input_names = ("a", "b", "b_offsets", "max_seq_len")
    output_names = ("c", "c_offsets")
    kernels = (FWD,)
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        offsets = case_offsets(case, device)
        gen = self.generator(case, seed)
        rows = max(0, int(offsets[-1]))
        tensors = {
            "a": torch.randn(case.shape["B"], generator=gen),
            "b": torch.randn(rows, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {**out, "b_offsets": offsets, "max_seq_len": torch.tensor(case.shape["max_seq_len"])}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        a, b = inputs["a"].to(compute_dtype), inputs["b"].to(compute_dtype)
        offsets = inputs["b_offsets"].cpu()
        n = int(inputs["max_seq_len"])
        c = torch.zeros(b.numel() + a.numel(), dtype=compute_dtype, device=b.device)
        c_offsets = offsets + torch.arange(offsets.numel())
        for i in range(a.numel()):
            begin, length = int(offsets[i]), int(offsets[i + 1] - offsets[i])
            kept = min(length, n)
            start = int(c_offsets[i])
            c[start] = a[i]
            c[start + 1 : start + 1 + kept] = b[begin : begin + kept]
        # The offsets as the golden's other values are, in float64 (exact below 2^53), whatever
        # the compute dtype: a bf16 reference would round them.
        return {"c": c, "c_offsets": c_offsets.to(torch.float64).to(b.device)}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """a (B) and the E = sum min(L, max_seq_len) values used of b read, c (sum_L + B)
        written, its B + 1 offsets read and written (int64); no flops, a copy."""
        b = case.shape["B"]
        size = case.torch_dtype.itemsize
        moved = (b + sum(effective_lengths(case)) + total_rows(case) + b) * size
        return moved + 2 * (b + 1) * 8, 0

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel != "fwd":
            raise ValueError(f"unknown kernel {kernel!r}; valid: fwd")
        port = load_port(NAME)
        c, c_offsets = port.dense_jagged_cat_jagged_out(
            inputs["a"], inputs["b"], inputs["b_offsets"], int(inputs["max_seq_len"]),
            config=config,
        )  # fmt: skip
        return {"c": c, "c_offsets": c_offsets}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        return self.launch("fwd", inputs, (configs or {}).get("fwd"))

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        return lambda: self.run_port(inputs, configs)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def _upstream(self, inputs: Tensors) -> tuple[torch.Tensor, torch.Tensor]:
        up = self.upstream.load()
        a, b, offsets = inputs["a"], inputs["b"], inputs["b_offsets"]
        return up.dense_jagged_cat_jagged_out(a, b, offsets, int(inputs["max_seq_len"]))

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        c, c_offsets = self._upstream(inputs)
        return {"c": c, "c_offsets": c_offsets}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        return lambda: self._upstream(inputs)


SPEC = DenseJaggedCatJaggedOut()
