"""multi_head_jagged_flash_attention: per head, self-attention inside each jagged sequence, scaled
by 1/max_seq_len.

out[h, m] = sum_{n < M} softmax_n(q[h, m] . k[h, n]) / max_seq_len * v[h, n], with
M = min(len_b, max_seq_len); rows past max_seq_len give zeros.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable

import torch

from core.upstream import load

from .cases import case_offsets, standard_cases
from .jagged_flash_attention_basic import (  # the same tiles: one head per program
    BLOCK_M,
    BLOCK_N,
    FWD_BLOCK_D,
    NUM_STAGES,
    NUM_WARPS,
    PRE_TUNABLES,
    attention_reference,
    bwd_dots,
    bwd_stream,
    bwd_tiles,
    fwd_dots,
    fwd_stream,
    fwd_tiles,
    next_d,
    pre_stream,
    pre_tiles,
    self_attention_traffic,
)
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
    next_pow2,
)

NAME = "multi_head_jagged_flash_attention"


def _m_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_M"]), case.shape["B"] * case.shape["H"]


def _n_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_N"]), case.shape["B"] * case.shape["H"]


def _seq_fits(name: str) -> Callable:
    return BlockFits(name, lambda c: max(16, next_pow2(c.shape["max_seq_len"])), "max_seq_len")


def _square(config: Config, case: Case, limits) -> str | None:
    """Upstream's (and the port's) backward computes dq of rows [pid * BLOCK_M, +BLOCK_M) on a
    grid of max_seq_len / BLOCK_N programs: only BLOCK_M == BLOCK_N covers every row once."""
    if config.get("BLOCK_M") != config.get("BLOCK_N"):
        return (
            f"bwd's dq part needs BLOCK_M == BLOCK_N, got {config.get('BLOCK_M')} "
            f"and {config.get('BLOCK_N')}"
        )
    return None


D_FITS = BlockFits("BLOCK_D", next_d, "D")

# (B, H, max_seq_len, D, lengths): B=1, an empty sequence, truncation past max_seq_len,
# max_seq_len not a multiple of any block, a D that is not a power of two, one and two heads.
ACCURACY_SHAPES = (
    (1, 2, 16, 16, (16,)),
    (4, 1, 16, 32, (0, 5, 16, 23)),
    (3, 2, 40, 24, (40, 0, 57)),
)
# Recommendation-sized: B up to 2048, 2-4 heads, max_seq_len 256-2048, D 64-128.
PERFORMANCE_SHAPES = (
    (1024, 2, 256, 64, "bfloat16"),
    (512, 4, 512, 64, "float32"),
    (2048, 2, 256, 128, "bfloat16"),
    (256, 2, 2048, 128, "float16"),
)


def uses_tf32(case: Case) -> bool:
    """fp32 performance cases run as upstream's public wrapper does (allow_tf32=True); accuracy
    cases keep strict fp32 dots."""
    return case.kind == "performance" and case.dtype == "float32"


def _valid_rows(offsets: torch.Tensor, max_seq_len: int, total: int) -> torch.Tensor:
    """Mask of the jagged rows within the first max_seq_len rows of their sequence."""
    offsets = offsets.cpu().long()
    lengths = offsets[1:] - offsets[:-1]
    within = torch.arange(total) - torch.repeat_interleave(offsets[:-1], lengths, output_size=total)
    return within < max_seq_len


class MultiHeadJaggedFlashAttention(OpSpec):
    name = NAME
    summary = (
        "Multi-head self-attention inside jagged sequences, probabilities scaled by "
        "1/max_seq_len; forward and backward"
    )
    upstream = Upstream(
        file="sll/triton/triton_multi_head_jagged_flash_attention.py",
        sha256="9c4a3923e6db6b55e51b9f6aa00086075f0eac0d4b212b3e7bb2dab20cacd6cf",
        functions=(
            "multi_head_jagged_flash_attention_fwd",
            "multi_head_jagged_flash_attention_bwd",
        ),
        lines="17-751",
    )
    shape_keys = ("B", "H", "max_seq_len", "D")
    input_names = ("q", "k", "v", "offsets", "max_seq_len", "dout")
    output_names = ("out", "lse", "dq", "dk", "dv")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=(BLOCK_M, BLOCK_N, FWD_BLOCK_D, NUM_WARPS, NUM_STAGES, MULTIBUFFER),
            outputs=("out", "lse"),
            default=lambda c: {
                "BLOCK_M": 32,
                "BLOCK_N": 32,
                "BLOCK_D": next_d(c),
                "num_warps": 4,
                "num_stages": 3,
            },
            grid=_m_blocks,
            tile_bytes=fwd_tiles,
            stream_bytes=fwd_stream,
            constraints=(_seq_fits("BLOCK_M"), _seq_fits("BLOCK_N"), D_FITS),
            dots=fwd_dots,
            port_kernel="_fwd_kernel",
            upstream_kernel="_multi_head_jagged_flash_attention_fwd_kernel",
        ),
        KernelSpec(
            name="bwd_preprocess",
            tunables=PRE_TUNABLES,
            outputs=("delta",),
            default=lambda c: {"BLOCK_M": 32, "BLOCK_D": next_d(c), "num_warps": 4},
            grid=_m_blocks,
            tile_bytes=pre_tiles,
            stream_bytes=pre_stream,
            constraints=(_seq_fits("BLOCK_M"), D_FITS),
            port_kernel="_bwd_preprocess_kernel",
            upstream_kernel="_multi_head_jagged_flash_attention_bwd_preprocess_kernel",
        ),
        KernelSpec(
            name="bwd",
            tunables=(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, MULTIBUFFER),
            outputs=("dq", "dk", "dv"),
            default=lambda c: {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
            grid=_n_blocks,
            tile_bytes=bwd_tiles,
            stream_bytes=bwd_stream,
            constraints=(_square, _seq_fits("BLOCK_M"), _seq_fits("BLOCK_N")),
            dots=bwd_dots,
            port_kernel="_bwd_kernel",
            upstream_kernel="_multi_head_jagged_flash_attention_bwd_kernel",
        ),
    )

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, h, n, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_h{h}_n{n}_d{d}_{SHORT_DTYPE[dtype]}"
        return Case(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        h, d = case.shape["H"], case.shape["D"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = case_offsets(case, torch.device("cpu"))
        rows = int(offsets[-1])
        dtype = case.torch_dtype
        tensors = {
            "q": torch.randn(h, rows, d, generator=gen) / d**0.5,
            "k": torch.randn(h, rows, d, generator=gen),
            "v": torch.randn(h, rows, d, generator=gen),
            "dout": torch.randn(h, rows, d, generator=gen),
        }
        out = {name: x.to(dtype).to(device) for name, x in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(case.shape["max_seq_len"])
        out["allow_tf32"] = torch.tensor(uses_tf32(case))
        return out

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        return attention_reference(inputs, compute_dtype, causal=False)

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """self_attention_traffic over H heads, no mask."""
        return self_attention_traffic(case, part, heads=case.shape["H"])

    def tolerance_for(self, case: Case) -> float:
        return 5e-3 if uses_tf32(case) else self.tolerance[case.dtype]

    def comparable(self, name: str, tensor: torch.Tensor, inputs: Tensors) -> torch.Tensor:
        if name in ("lse", "delta"):  # defined for the first max_seq_len rows of a sequence only
            valid = _valid_rows(inputs["offsets"], int(inputs["max_seq_len"]), tensor.size(1))
            return tensor[:, valid.to(tensor.device)]
        return tensor

    @staticmethod
    def _args(inputs: Tensors) -> tuple:
        return (
            inputs["q"],
            inputs["k"],
            inputs["v"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
            bool(inputs["allow_tf32"]),
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(NAME)
        q, k, v, offsets, n, tf32 = self._args(inputs)
        # As the autograd function: the backward reads the forward's unrounded fp32 output.
        out, lse = port.multi_head_jagged_flash_attention_fwd(
            q, k, v, offsets, n, tf32, config=configs.get("fwd"), out_dtype=torch.float32
        )
        dq, dk, dv = port.multi_head_jagged_flash_attention_bwd(
            q, k, v, out, offsets, inputs["dout"], lse, n, tf32, configs=configs
        )
        return {"out": out.to(q.dtype), "lse": lse, "dq": dq, "dk": dk, "dv": dv}

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        if case.dtype == "bfloat16" and os.environ.get("TRITON_INTERPRET") == "1":
            # Upstream's backward keeps lse and delta in bf16 and does elementwise arithmetic on
            # them, which the interpreter runs on bf16's uint16 bit patterns (dq, dk are garbage),
            # and triton-ascend's interpreter cannot build its bf16 `other=inf` at all.
            return ("out", "lse")
        return ("out", "lse", "dq", "dk", "dv")

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, offsets, n, tf32 = self._args(inputs)
        produced = self.upstream_outputs(case)
        out, lse = up.multi_head_jagged_flash_attention_fwd(q, k, v, offsets, n, tf32)
        result = {"out": out, "lse": lse}
        if "dq" in produced:
            dq, dk, dv = up.multi_head_jagged_flash_attention_bwd(
                q, k, v, out, offsets, inputs["dout"], lse, n, tf32
            )
            result.update(dq=dq, dk=dk, dv=dv)
        return result

    parts = {"fwd": ("fwd",), "bwd": ("bwd_preprocess", "bwd")}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(NAME)
        q, k, v, offsets, n, tf32 = self._args(inputs)
        configs = configs or {}
        if part == "fwd":
            return lambda: port.multi_head_jagged_flash_attention_fwd(
                q, k, v, offsets, n, tf32, config=configs.get("fwd")
            )
        out, lse = port.multi_head_jagged_flash_attention_fwd(
            q, k, v, offsets, n, tf32, config=configs.get("fwd"), out_dtype=torch.float32
        )
        dout = inputs["dout"]
        return lambda: port.multi_head_jagged_flash_attention_bwd(
            q, k, v, out, offsets, dout, lse, n, tf32, configs=configs
        )

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if part == "bwd" and "dq" not in self.upstream_outputs(case):
            return None
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, offsets, n, tf32 = self._args(inputs)
        if part == "fwd":
            return lambda: up.multi_head_jagged_flash_attention_fwd(q, k, v, offsets, n, tf32)
        out, lse = up.multi_head_jagged_flash_attention_fwd(q, k, v, offsets, n, tf32)
        dout = inputs["dout"]
        return lambda: up.multi_head_jagged_flash_attention_bwd(
            q, k, v, out, offsets, dout, lse, n, tf32
        )

    def kernel_inputs(self, kernel: str, inputs: Tensors, golden: Tensors) -> Tensors:
        if kernel == "fwd":
            return inputs
        device = inputs["q"].device
        return {
            **inputs,
            "out": golden["out"].to(device=device, dtype=torch.float32),
            "lse": golden["lse"].to(device=device, dtype=torch.float32),
            "delta": golden["delta"].to(device=device, dtype=torch.float32),
        }

    def launch(self, kernel: str, inputs: Tensors, config: Config) -> Tensors:
        port = load_port(NAME)
        q, k, v, offsets, n, tf32 = self._args(inputs)
        if kernel == "fwd":
            out, lse = port.multi_head_jagged_flash_attention_fwd(
                q, k, v, offsets, n, tf32, config=config
            )
            return {"out": out, "lse": lse}
        if kernel == "bwd_preprocess":
            return {
                "delta": port.bwd_preprocess(
                    inputs["out"], inputs["dout"], offsets, n, config=config
                )
            }
        if kernel == "bwd":
            dq, dk, dv = port.bwd(
                q, k, v, offsets, n, inputs["dout"], inputs["lse"], inputs["delta"], tf32,
                config=config,
            )  # fmt: skip
            return {"dq": dq, "dk": dk, "dv": dv}
        raise ValueError(f"unknown kernel {kernel!r}")


SPEC = MultiHeadJaggedFlashAttention()
