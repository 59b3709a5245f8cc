"""jagged_self_substraction_jagged_out (FBGEMM SLL `triton_jagged_self_substraction_jagged_out`):
per sequence of a 1-D jagged a, the matrix of differences of its values with the values after
the first.

With N_b = min(L_b, max_seq_len + 1) - 1 (0 for an empty sequence), the output b is jagged with
offsets cumsum(N_b^2) (given, as upstream's caller gives them), and
b[offsets_b[i] + r * N_i + c] = a[offsets_a[i] + r] - a[offsets_a[i] + 1 + c] for r, c < N_i.
No backward upstream.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from .cases import case_offsets
from .jagged1d import Jagged1dOp
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import PROGRAMS, Role, Tunable

NAME = "jagged_self_substraction_jagged_out"

# (B, max_seq_len, lengths): B=1, empty sequences and single values (no differences), sequences
# past max_seq_len + 1 (truncated), N not a power of two over upstream's least block (32).
ACCURACY_SHAPES = (
    (1, 8, (8,)),
    (4, 16, (0, 5, 16, 23)),
    (6, 33, (33, 0, 50, 1, 34, 0)),
    (3, 40, (41, 2, 30)),
)
PERFORMANCE_SHAPES = (
    (1024, 256, "float16"),
    (512, 512, "float32"),
    (256, 1024, "bfloat16"),
    (2048, 128, "float32"),
)


def upstream_block(max_seq_len: int) -> int:
    """Upstream's BLOCK_SIZE: `max(next_power_of_two(max_seq_len), 16)` with SLL's
    next_power_of_two, which is at least 32 (and refuses over 4096)."""
    return max(32, next_pow2(max_seq_len))


def _default(case: Case) -> Config:
    return {"BLOCK_M": 1, "BLOCK_N": upstream_block(case.shape["max_seq_len"]), "num_warps": 4}


def _grid(config: Config, case: Case) -> tuple[int]:
    """One program per (block of BLOCK_M rows of max_seq_len, sequence) tile, on one axis."""
    rows = max(1, -(-case.shape["max_seq_len"] // config["BLOCK_M"]))
    return (rows * case.shape["B"],)


def _tile_bytes(config: Config, case: Case) -> int:
    """The rows' and the columns' values, the difference tile (fp32) and its store in the dtype."""
    m, n, size = config["BLOCK_M"], config["BLOCK_N"], case.torch_dtype.itemsize
    return (m + n) * size + m * n * (4 + size)


def _stream_bytes(config: Config, case: Case) -> int:
    return config["BLOCK_N"] * case.torch_dtype.itemsize


FWD = KernelSpec(
    name="fwd",
    tunables=(
        Tunable("BLOCK_M", pow2_range(1, 64)),
        Tunable("BLOCK_N", pow2_range(16, 4096)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
        PROGRAMS,
    ),
    outputs=("b",),
    default=_default,
    grid=_grid,
    tile_bytes=_tile_bytes,
    stream_bytes=_stream_bytes,
    constraints=(
        BlockFits("BLOCK_M", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
        BlockFits("BLOCK_N", lambda c: upstream_block(c.shape["max_seq_len"]), "max_seq_len"),
    ),
    port_kernel="_jagged_self_subtraction_kernel",
    upstream_kernel="jagged_self_substraction_jagged_out_kernel",
)


def differences(lengths: torch.Tensor, max_seq_len: int) -> torch.Tensor:
    """N_b = min(L_b, max_seq_len + 1) - 1, at least 0: the differences' side per sequence."""
    return (lengths.clamp(max=max_seq_len + 1) - 1).clamp(min=0)


class JaggedSelfSubstractionJaggedOut(Jagged1dOp):
    name = NAME
    summary = "Per 1-D jagged sequence, the N x N matrix a[r] - a[1 + c], jagged output"
    upstream = Upstream(
        file="sll/triton/triton_jagged_self_substraction_jagged_out.py",
        sha256="4ddd065f1089e611c692dcf86e02ac3405ce5e96d498670e22f255d14c9f66d3",
        functions=("triton_jagged_self_substraction_jagged_out",),
        lines="16-74",
    )
    input_names = ("a", "offsets_a", "offsets_b", "max_seq_len")
    output_names = ("b",)
    kernels = (FWD,)
    accuracy_shapes = ACCURACY_SHAPES
    performance_shapes = PERFORMANCE_SHAPES

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        offsets = case_offsets(case, torch.device("cpu"))
        n = case.shape["max_seq_len"]
        sides = differences(offsets[1:] - offsets[:-1], n)
        offsets_b = torch.zeros_like(offsets)
        offsets_b[1:] = torch.cumsum(sides * sides, 0)
        a = torch.randn(max(0, int(offsets[-1])), generator=self.generator(case, seed))
        return {
            "a": a.to(case.torch_dtype).to(device),
            "offsets_a": offsets.to(device),
            "offsets_b": offsets_b.to(device),
            "max_seq_len": torch.tensor(n),
            # A host value: the launches never read the offsets to size the output.
            "total": torch.tensor(int(offsets_b[-1])),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        a = inputs["a"].to(compute_dtype)
        offsets, offsets_b = inputs["offsets_a"].cpu(), inputs["offsets_b"].cpu()
        sides = differences(offsets[1:] - offsets[:-1], int(inputs["max_seq_len"]))
        b = torch.zeros(int(offsets_b[-1]), dtype=compute_dtype, device=a.device)
        for i, side in enumerate(sides.tolist()):
            begin, out = int(offsets[i]), int(offsets_b[i])
            values = a[begin : begin + side + 1]
            b[out : out + side * side] = (values[:side, None] - values[None, 1:]).reshape(-1)
        return {"b": b}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """Each sequence's N + 1 values read, its N^2 differences written; a flop each."""
        n = case.shape["max_seq_len"]
        sides = [max(min(length, n + 1) - 1, 0) for length in case.lengths]
        size = case.torch_dtype.itemsize
        out = sum(s * s for s in sides)
        return (sum(s + 1 for s in sides if s) + out) * size + 2 * (case.shape["B"] + 1) * 8, out

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel != "fwd":
            raise ValueError(f"unknown kernel {kernel!r}; valid: fwd")
        port = load_port(NAME)
        b = port.jagged_self_substraction_jagged_out(
            inputs["a"], inputs["offsets_a"], inputs["offsets_b"], int(inputs["max_seq_len"]),
            int(inputs["total"]), config=config,
        )  # fmt: skip
        return {"b": b}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        return self.launch("fwd", inputs, (configs or {}).get("fwd"))

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        return lambda: self.run_port(inputs, configs)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self.upstream.load()
        a, offsets_a, offsets_b = (inputs[k] for k in ("a", "offsets_a", "offsets_b"))
        n = int(inputs["max_seq_len"])
        return {"b": up.triton_jagged_self_substraction_jagged_out(a, offsets_a, offsets_b, n)}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        """Upstream's wrapper reads offsets_b[-1] on the host to size its output, which would
        time the host's wait: its kernel is launched as the wrapper does, the output sized from
        the case's host value."""
        up = self.upstream.load()
        a, offsets_a, offsets_b = (inputs[k] for k in ("a", "offsets_a", "offsets_b"))
        n, total = int(inputs["max_seq_len"]), int(inputs["total"])
        grid = (offsets_a.numel() - 1, n)
        block = upstream_block(n)

        def call() -> torch.Tensor:
            b = torch.empty(total, device=a.device, dtype=a.dtype)
            up.jagged_self_substraction_jagged_out_kernel[grid](
                a, b, offsets_a, offsets_b, n, block
            )
            return b

        return call


SPEC = JaggedSelfSubstractionJaggedOut()
