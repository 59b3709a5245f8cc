"""jagged_jagged_bmm_jagged_out (FBGEMM SLL `jagged_jagged_bmm_jagged_out`, the autograd Function
JaggedJaggedBmmNoPadding): z = x y^T per sequence of two jagged tensors of one layout, with a
jagged output, forward and backward.

x, y [sum_L, D] (sequence i: L_i rows at offsets[i]), z [sum_i L_i^2] at z_offsets = cumsum of
L_i^2. With Lt = min(L_i, max_seq_len), upstream's layouts:
- forward (`jagged_jagged_bmm_jagged_out_kernel`): z[z_offsets[i] + m * Lt + n] = x_m . y_n for
  m, n < Lt, zeros elsewhere in the segment (an Lt x Lt block, row stride Lt);
- backward (`array_jagged_bmm_kernel`, twice): dz read as an L_i x L_i matrix (row stride L_i),
  dx_m = sum_{k < Lt} dz[m, k] y_k and dy_m = sum_{k < Lt} dz[k, m] x_k for m < Lt, zeros for
  the rows past max_seq_len.
The two layouts differ only for a sequence longer than max_seq_len; both are upstream's.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from .cases import case_offsets, effective_lengths, standard_cases, total_rows
from .jagged_dense_bmm import (
    TUNABLES,
    _accumulator_registers,
    _dots,
    _stream,
    _tiles,
    uses_tf32,
)
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
    next_pow2,
)

NAME = "jagged_jagged_bmm_jagged_out"
#: Upstream's BLOCK_SIZE_M, _N and _K, every launch.
UPSTREAM_BLOCK = 32

# (B, max_seq_len, D, lengths): B=1, empty sequences, sequences past max_seq_len, D not a
# multiple of a block, sequences of several blocks.
ACCURACY_SHAPES = (
    (1, 16, 16, (16,)),
    (4, 16, 40, (0, 5, 16, 23)),
    (3, 40, 24, (40, 0, 57)),
)
# Recommendation-sized; upstream's default grid (cdiv(max_seq_len, 32)^2 x B programs for the
# forward) stays under Ascend's 65535 blocks per launch.
PERFORMANCE_SHAPES = (
    (512, 256, 128, "bfloat16"),
    (128, 512, 64, "float32"),
    (768, 256, 256, "float16"),
    (192, 512, 128, "bfloat16"),
)


def _default(case: Case) -> Config:
    """Upstream's launch: 32 x 32 x 32 blocks, Triton's num_warps=4, num_stages=3."""
    return {
        "BLOCK_M": UPSTREAM_BLOCK, "BLOCK_N": UPSTREAM_BLOCK, "BLOCK_K": UPSTREAM_BLOCK,
        "num_warps": 4, "num_stages": 3,
    }  # fmt: skip


def _fits(tunable: str, key: str) -> BlockFits:
    """A block over its dimension padded only computes padding; upstream's 32 stays allowed."""
    return BlockFits(tunable, lambda c: max(UPSTREAM_BLOCK, next_pow2(c.shape[key])), key)


def _kernel(name: str, grid_n: str, k: str, transposed: str, outputs: tuple[str, ...]):
    """The forward (`grid_n` max_seq_len: an Lt x Lt output) or a backward kernel (`grid_n` D:
    Lt rows of D), reducing over `k`; `transposed` names the operand loaded transposed."""

    def grid(config: Config, case: Case) -> tuple[int, int]:
        m = -(-case.shape["max_seq_len"] // config["BLOCK_M"])
        return m * -(-case.shape[grid_n] // config["BLOCK_N"]), case.shape["B"]

    port, upstream = (
        ("_jagged_jagged_bmm_jagged_out_kernel", "jagged_jagged_bmm_jagged_out_kernel")
        if name == "fwd"
        else ("_array_jagged_bmm_kernel", "array_jagged_bmm_kernel")
    )
    return KernelSpec(
        name=name,
        tunables=TUNABLES,
        outputs=outputs,
        default=_default,
        grid=grid,
        tile_bytes=_tiles,
        stream_bytes=_stream,
        constraints=(
            _fits("BLOCK_M", "max_seq_len"),
            _fits("BLOCK_N", grid_n),
            _fits("BLOCK_K", k),
            _accumulator_registers,
        ),
        dots=_dots(transposed),
        port_kernel=port,
        upstream_kernel=upstream,
    )


def blocks(lengths: torch.Tensor, max_seq_len: int) -> list[tuple[int, int]]:
    """(L, Lt) per sequence: its length and the rows upstream uses."""
    return [(length, min(length, max_seq_len)) for length in lengths.tolist()]


class JaggedJaggedBmmJaggedOut(OpSpec):
    name = NAME
    summary = "z = x y^T per sequence of two jagged [sum_L, D] tensors, jagged output; fwd and bwd"
    upstream = Upstream(
        file="sll/triton/triton_jagged_bmm_jagged_out.py",
        sha256="85c70bc6c2a84992a25a27793ffca5f8855d0525f0d51b7459e891b232c3d88c",
        functions=("jagged_jagged_bmm_jagged_out", "JaggedJaggedBmmNoPadding"),
        lines="14-553",
    )
    shape_keys = ("B", "max_seq_len", "D")
    input_names = ("x", "y", "offsets", "z_offsets", "max_seq_len", "dz")
    output_names = ("z", "dx", "dy")
    kernels = (
        # z = x [Lt, D] @ y^T [D, Lt]: y loaded transposed
        _kernel("fwd", "max_seq_len", "D", "b", ("z",)),
        # dx = dz [Lt, Lt] @ y [Lt, D]
        _kernel("bwd_dx", "D", "max_seq_len", "", ("dx",)),
        # dy = dz^T [Lt, Lt] @ x [Lt, D]: dz loaded transposed
        _kernel("bwd_dy", "D", "max_seq_len", "a", ("dy",)),
    )
    parts = {"fwd": ("fwd",), "bwd": ("bwd_dx", "bwd_dy")}

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_{SHORT_DTYPE[dtype]}"
        return Case(self.name, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def jagged_rows(self, case: Case) -> int:
        return total_rows(case)

    def tolerance_for(self, case: Case) -> float:
        return 5e-3 if uses_tf32(case) else self.tolerance[case.dtype]

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        offsets = case_offsets(case, torch.device("cpu"))
        lengths = offsets[1:] - offsets[:-1]
        z_offsets = torch.zeros_like(offsets)
        z_offsets[1:] = torch.cumsum(lengths * lengths, 0)
        rows, total = max(0, int(offsets[-1])), int(z_offsets[-1])
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        d = case.shape["D"]
        tensors = {
            "x": torch.randn(rows, d, generator=gen) / d**0.25,
            "y": torch.randn(rows, d, generator=gen) / d**0.25,  # z of about unit scale
            "dz": torch.randn(total, generator=gen),
        }
        out = {k: v.to(case.torch_dtype).to(device) for k, v in tensors.items()}
        return {
            **out,
            "offsets": offsets.to(device),
            "z_offsets": z_offsets.to(device),
            "max_seq_len": torch.tensor(case.shape["max_seq_len"]),
            "allow_tf32": torch.tensor(uses_tf32(case)),
            # Host values: the launches never read the offsets to size their outputs.
            "total": torch.tensor(total),
        }

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, y, dz = (inputs[k].to(compute_dtype) for k in ("x", "y", "dz"))
        offsets, z_offsets = inputs["offsets"].cpu(), inputs["z_offsets"].cpu()
        n = int(inputs["max_seq_len"])
        z, dx, dy = torch.zeros_like(dz), torch.zeros_like(x), torch.zeros_like(y)
        for i, (length, kept) in enumerate(blocks(offsets[1:] - offsets[:-1], n)):
            rows = slice(int(offsets[i]), int(offsets[i]) + kept)
            start = int(z_offsets[i])
            z[start : start + kept * kept] = (x[rows] @ y[rows].T).reshape(-1)
            grad = dz[start : start + length * length].reshape(length, length)[:kept, :kept]
            dx[rows] = grad @ y[rows]
            dy[rows] = grad.T @ x[rows]
        return {"z": z, "dx": dx, "dy": dy}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """With Lt = min(L, max_seq_len), E = sum Lt, S = sum Lt^2, R = sum L, Z = sum L^2.
        fwd: x and y (E x D) read, z (Z, zeros included) written; 2 S D flops. bwd: dz (S),
        x and y read, dx and dy (R x D, zeros past max_seq_len) written; 4 S D flops."""
        d = case.shape["D"]
        kept = effective_lengths(case)
        e, s = sum(kept), sum(k * k for k in kept)
        r, z = total_rows(case), sum(length * length for length in case.lengths)
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return (2 * e * d + z) * size, 2 * s * d
        return (s + 2 * e * d + 2 * r * d) * size, 4 * s * d

    # -- the port ------------------------------------------------------------------------------
    def _args(self, inputs: Tensors):
        return (
            inputs["x"], inputs["y"], inputs["offsets"], inputs["z_offsets"],
            int(inputs["max_seq_len"]), bool(inputs["allow_tf32"]),
        )  # fmt: skip

    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        port = load_port(NAME)
        x, y, offsets, z_offsets, n, tf32 = self._args(inputs)
        if kernel == "fwd":
            z = port.jagged_jagged_bmm_jagged_out_fwd(
                x, y, offsets, z_offsets, n, int(inputs["total"]), tf32, config=config
            )
            return {"z": z}
        if kernel in ("bwd_dx", "bwd_dy"):
            grad = getattr(port, kernel)(x, y, offsets, z_offsets, n, inputs["dz"], tf32, config=config)  # fmt: skip
            return {kernel.removeprefix("bwd_"): grad}
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd_dx, bwd_dy")

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        outputs: Tensors = {}
        for kernel in ("fwd", "bwd_dx", "bwd_dy"):
            outputs |= self.launch(kernel, inputs, configs.get(kernel))
        return outputs

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        configs = configs or {}
        kernels = self.parts[part]
        return lambda: [self.launch(k, inputs, configs.get(k)) for k in kernels]

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        return self.output_names

    def _upstream_fwd(self, inputs: Tensors) -> torch.Tensor:
        """triton_jagged_jagged_bmm_jagged_out(x, y.T, ...) as JaggedJaggedBmmNoPadding.forward
        calls it, its output sized from the case's host value (the wrapper sums the lengths on
        the device and sizes its output with that sum: a read of the device)."""
        up = self.upstream.load()
        x, y, offsets, z_offsets, n, tf32 = self._args(inputs)
        z = torch.zeros(int(inputs["total"]), device=x.device, dtype=x.dtype)
        blocks_n = -(-n // UPSTREAM_BLOCK)
        y_t = y.T
        up.jagged_jagged_bmm_jagged_out_kernel[(-(-n // UPSTREAM_BLOCK) * blocks_n, offsets.numel() - 1)](
            x, offsets, y_t, offsets, z, z_offsets, n, blocks_n, x.size(1),
            x.stride(0), x.stride(1), y_t.stride(0), y_t.stride(1), tf32,
            UPSTREAM_BLOCK, UPSTREAM_BLOCK, UPSTREAM_BLOCK,
        )  # fmt: skip
        return z

    def _upstream_bwd(
        self, inputs: Tensors, lengths: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """JaggedJaggedBmmNoPadding.backward's two calls of triton_array_jagged_bmm_jagged_out
        (it reads no device value; the lengths it takes only give B)."""
        up = self.upstream.load()
        x, y, offsets, z_offsets, n, tf32 = self._args(inputs)
        dz = inputs["dz"]
        dx = up.triton_array_jagged_bmm_jagged_out(
            dz, y, lengths, lengths, lengths, z_offsets, offsets, offsets, n, tf32, transpose=0
        )
        dy = up.triton_array_jagged_bmm_jagged_out(
            dz, x, lengths, lengths, lengths, z_offsets, offsets, offsets, n, tf32, transpose=1
        )
        return dx, dy

    @staticmethod
    def _lengths(inputs: Tensors) -> torch.Tensor:
        offsets = inputs["offsets"]
        return offsets[1:] - offsets[:-1]

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        dx, dy = self._upstream_bwd(inputs, self._lengths(inputs))
        return {"z": self._upstream_fwd(inputs), "dx": dx, "dy": dy}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object]:
        if part == "fwd":
            return lambda: self._upstream_fwd(inputs)
        lengths = self._lengths(inputs)  # prepared untimed, as upstream's caller has them
        return lambda: self._upstream_bwd(inputs, lengths)


SPEC = JaggedJaggedBmmJaggedOut()
