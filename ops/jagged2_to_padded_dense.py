"""jagged2_to_padded_dense (FBGEMM SLL) and its backward padded_dense_to_jagged2.

values holds per sequence b a row-major L_b x L_b block at offsets[b] (offsets = cumsum of L_b^2,
L_b = floor(sqrt(offsets[b + 1] - offsets[b])) as upstream computes it). With
Lt = min(L_b, max_seq_len) and upstream's addressing (row stride Lt):
dense[b, m, n] = values[offsets[b] + m * Lt + n] for m, n < Lt, else padding_value;
dvalues[offsets[b] + m * Lt + n] = ddense[b, m, n] for m, n < Lt, and 0 elsewhere in the segment.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import load

from .jagged_dense_elementwise_mul_jagged_out import Jagged2Op, jagged2_segments
from .npu_tunables import MULTIBUFFER
from .ports import load_port
from .spec import BlockFits, Case, Config, KernelSpec, Tensors, Upstream, next_pow2, pow2_range
from .tunable import Role, Tunable

NAME = "jagged2_to_padded_dense"
#: Not zero, so a padded position the kernel forgot to write cannot pass as padding.
PADDING_VALUE = -1.0
UPSTREAM_BLOCK = 32  # upstream's BLOCK_M = BLOCK_N, both directions


def _grid(config: Config, case: Case) -> tuple[int, int, int]:
    n = case.shape["max_seq_len"]
    return (
        max(1, -(-n // config["BLOCK_M"])),
        max(1, -(-n // config["BLOCK_N"])),
        case.shape["B"],
    )


def _tile(config: Config, case: Case) -> int:
    return config["BLOCK_M"] * config["BLOCK_N"] * case.torch_dtype.itemsize


def _bwd_tiles(config: Config, case: Case) -> int:
    """The copied tile and the zero tile of the segment's tail."""
    return 2 * _tile(config, case)


def _tunables() -> tuple[Tunable, ...]:
    return (
        Tunable("BLOCK_M", pow2_range(1, 128)),
        Tunable("BLOCK_N", pow2_range(16, 256)),
        Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
        MULTIBUFFER,
    )


CONSTRAINTS = (
    BlockFits("BLOCK_M", lambda c: next_pow2(c.shape["max_seq_len"]), "max_seq_len"),
    BlockFits("BLOCK_N", lambda c: max(16, next_pow2(c.shape["max_seq_len"])), "max_seq_len"),
)


def _default(case: Case) -> Config:
    return {"BLOCK_M": UPSTREAM_BLOCK, "BLOCK_N": UPSTREAM_BLOCK, "num_warps": 4}


def upstream_lengths(offsets: torch.Tensor) -> torch.Tensor:
    """Jagged2ToPaddedDense.forward's lengths: sqrt of the segment sizes, truncated to int32."""
    return torch.sqrt(offsets[1:] - offsets[0:-1:1]).to(torch.int32)


class Jagged2ToPaddedDense(Jagged2Op):
    name = NAME
    summary = "Copy a jagged2 tensor into a padded [B, N, N] dense one; backward back to jagged2"
    upstream = Upstream(
        file="sll/triton/triton_jagged2_to_padded_dense.py",
        sha256="9712187b631475edaac4b54efda7939b7e1f0ec308cfc664223cb1f5793e6241",
        functions=("jagged2_to_padded_dense",),
        lines="17-221",
    )
    input_names = ("values", "offsets", "max_seq_len", "ddense")
    output_names = ("dense", "dvalues")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=_tunables(),
            outputs=("dense",),
            default=_default,
            grid=_grid,
            tile_bytes=_tile,
            stream_bytes=_tile,
            constraints=CONSTRAINTS,
            loops=False,
            port_kernel="_jagged2_to_padded_dense_kernel",
            upstream_kernel="jagged2_to_padded_dense_kernel",
        ),
        KernelSpec(
            name="bwd",
            tunables=_tunables(),
            outputs=("dvalues",),
            default=_default,
            grid=_grid,
            tile_bytes=_bwd_tiles,
            stream_bytes=_tile,
            constraints=CONSTRAINTS,
            port_kernel="_padded_dense_to_jagged2_kernel",
            upstream_kernel="padded_dense_to_jagged2_kernel",
        ),
    )
    parts = {"fwd": ("fwd",), "bwd": ("bwd",)}

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        b, n = case.shape["B"], case.shape["max_seq_len"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = self.jagged2_offsets(case)
        total = max(0, int(offsets[-1]))
        tensors = {
            "values": torch.randn(total, generator=gen),
            "ddense": torch.randn(b, n, n, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(n)
        out["total_length"] = torch.tensor(total)  # a host value: launches never read offsets
        return out

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n = int(inputs["max_seq_len"])
        offsets = inputs["offsets"].cpu()
        values = inputs["values"].to(compute_dtype)
        ddense = inputs["ddense"].to(compute_dtype)
        dense = torch.full(
            (offsets.numel() - 1, n, n), PADDING_VALUE, dtype=compute_dtype, device=values.device
        )
        dvalues = torch.zeros_like(values)
        for b, (begin, _, lt) in enumerate(jagged2_segments(upstream_lengths(offsets), offsets, n)):
            dense[b, :lt, :lt] = values[begin : begin + lt * lt].reshape(lt, lt)
            dvalues[begin : begin + lt * lt] = ddense[b, :lt, :lt].reshape(-1)
        return {"dense": dense, "dvalues": dvalues}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """Copies, no flops; U = sum_b Lt_b^2. fwd: U elements of values read, the whole
        [B, N, N] dense written. bwd: U elements of ddense read, the whole jagged2 dvalues
        (sum_b L_b^2, segment tails as zeros) written."""
        b, n = case.shape["B"], case.shape["max_seq_len"]
        written = b * n * n if part == "fwd" else self.jagged2_elements(case)
        return (self.jagged2_used(case) + written) * case.torch_dtype.itemsize, 0

    # -- the port ------------------------------------------------------------------------------
    def _fwd(self, inputs: Tensors, config: Config | None):
        port = load_port(NAME)
        n = int(inputs["max_seq_len"])
        return port.jagged2_to_padded_dense_fwd(
            inputs["values"], inputs["offsets"], n, PADDING_VALUE, config=config
        )

    def _bwd(self, inputs: Tensors, config: Config | None):
        """The backward's kernel; with inputs["lengths"] (what the forward saves, as upstream's
        does) the launcher does not compute them again."""
        port = load_port(NAME)
        n = int(inputs["max_seq_len"])
        total = int(inputs["total_length"])
        return port.padded_dense_to_jagged2_fwd(
            inputs["ddense"], inputs["offsets"], n, total, lengths=inputs.get("lengths"),
            config=config,
        )  # fmt: skip

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        if kernel != "bwd":
            return inputs
        return {**inputs, "lengths": load_port(NAME).jagged2_lengths(inputs["offsets"])}

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        return {
            "dense": self._fwd(inputs, configs.get("fwd")),
            "dvalues": self._bwd(inputs, configs.get("bwd")),
        }

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        if kernel == "fwd":
            return {"dense": self._fwd(inputs, config)}
        if kernel == "bwd":
            return {"dvalues": self._bwd(inputs, config)}
        raise ValueError(f"unknown kernel {kernel!r}")

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        configs = configs or {}
        if part == "fwd":
            return lambda: self._fwd(inputs, configs.get("fwd"))
        saved = self.kernel_inputs("bwd", inputs, {})  # the forward's lengths, untimed
        return lambda: self._bwd(saved, configs.get("bwd"))

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return ("dense", "dvalues")

    def _up(self):
        return load(self.upstream.file, self.upstream.sha256)

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = self._up()
        values, offsets, ddense = inputs["values"], inputs["offsets"], inputs["ddense"]
        n = int(inputs["max_seq_len"])
        lengths = upstream_lengths(offsets)
        dense = up.jagged2_to_padded_dense_fwd(values, lengths, offsets, n, PADDING_VALUE)
        # Jagged2ToPaddedDense.backward's kernel exactly as padded_dense_to_jagged2_fwd launches
        # it, on a zeroed output: upstream allocates it with torch.empty and leaves the segment
        # tail of sequences longer than max_seq_len unwritten (undefined values).
        dvalues = torch.zeros(int(offsets[-1]), dtype=ddense.dtype, device=ddense.device)
        self._upstream_bwd(up, ddense, lengths, offsets, dvalues, n)()
        return {"dense": dense, "dvalues": dvalues}

    @staticmethod
    def _upstream_bwd(up, ddense, lengths, offsets, dvalues, n: int) -> Callable[[], object]:
        """Upstream's backward kernel, launched as padded_dense_to_jagged2_fwd launches it, into
        `dvalues` (its wrapper reads offsets[-1] on the host to allocate it: outside the call)."""
        grid = (-(-n // UPSTREAM_BLOCK), -(-n // UPSTREAM_BLOCK), ddense.size(0))
        return lambda: up.padded_dense_to_jagged2_kernel[grid](
            ddense, lengths, offsets, dvalues, ddense.stride(0), ddense.stride(1),
            ddense.stride(2), n, UPSTREAM_BLOCK, UPSTREAM_BLOCK,
        )  # fmt: skip

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        up = self._up()
        offsets = inputs["offsets"]
        n = int(inputs["max_seq_len"])
        lengths = upstream_lengths(offsets)  # computed in forward, saved for backward
        if part == "fwd":
            values = inputs["values"]
            return lambda: up.jagged2_to_padded_dense(values, offsets, n, PADDING_VALUE)
        ddense = inputs["ddense"]
        total = int(inputs["total_length"])
        dvalues = torch.empty(total, dtype=ddense.dtype, device=ddense.device)  # as upstream
        return self._upstream_bwd(up, ddense, lengths, offsets, dvalues, n)


SPEC = Jagged2ToPaddedDense()
