"""jagged_flash_attention_basic: self-attention inside each jagged sequence, scaled by 1/max_seq_len.

out[m] = sum_{n < M, (n >= m if use_mask)} softmax_n(q[m] . k[n]) / max_seq_len * v[n], with
M = min(len_b, max_seq_len); rows past max_seq_len give zeros.
"""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from core.upstream import load

from .cases import FP32, case_offsets, effective_lengths, total_rows
from .jagged import pad_rows, sequence_chunks, skewed_lengths, unpad_rows
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

NAME = "jagged_flash_attention_basic"

BLOCK_M = Tunable("BLOCK_M", pow2_range(16, 128))
BLOCK_N = Tunable("BLOCK_N", pow2_range(16, 128))
# The forward's q.k loop over D slices: upstream fixes BLOCK_SIZE_D = 32.
FWD_BLOCK_D = Tunable("BLOCK_D", pow2_range(16, 256))
NUM_WARPS = Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION)
NUM_STAGES = Tunable("num_stages", (2, 3), role=Role.LAUNCH_OPTION)
#: bwd_preprocess (delta = rowsum(out * dout)): rows and the D slice per program.
PRE_TUNABLES = (
    Tunable("BLOCK_M", pow2_range(16, 256)),
    Tunable("BLOCK_D", pow2_range(16, 256)),
    Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
    MULTIBUFFER,
)


def attention_reference(inputs: Tensors, compute_dtype: torch.dtype, causal: bool) -> Tensors:
    """Outputs and gradients over [H, sum_L, D] q, k, v and dout, a chunk of sequences at a time
    (their padded [B, H, n, n] scores are the big part)."""
    n = int(inputs["max_seq_len"])
    offsets = inputs["offsets"]
    q, k, v = (inputs[x].to(compute_dtype).detach().requires_grad_() for x in ("q", "k", "v"))
    dout = inputs["dout"].to(compute_dtype)
    heads, total, _ = q.shape
    out, lse = torch.zeros_like(dout), dout.new_zeros(heads, total)
    for i, j in sequence_chunks(offsets, heads * n * n):
        r0, r1 = int(offsets[i]), int(offsets[j])
        rows = slice(r0, r1)
        chunk_out, chunk_lse = _padded_attention(
            q[:, rows], k[:, rows], v[:, rows], offsets[i : j + 1] - r0, n, causal
        )
        if chunk_out.requires_grad:  # not where every sequence of the chunk is empty
            chunk_out.backward(dout[:, rows])
        out[:, rows], lse[:, rows] = chunk_out.detach(), chunk_lse
    grads = {
        name: x.grad if x.grad is not None else torch.zeros_like(x)
        for name, x in (("dq", q), ("dk", k), ("dv", v))
    }
    return {"out": out, "lse": lse, **grads, "delta": (out * dout).sum(-1)}


def _padded_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, offsets: torch.Tensor, n: int, causal: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """(out [H, L, D], lse [H, L]) of the sequences of `offsets`, through padded [B, H, n, n] scores."""
    heads, total, d = q.shape

    def padded(x):  # [H, L, D] -> [B, H, n, D]
        p, mask = pad_rows(x.transpose(0, 1).reshape(total, heads * d), offsets, n)
        return p.reshape(p.size(0), n, heads, d).transpose(1, 2), mask

    (qp, mask), (kp, _), (vp, _) = padded(q), padded(k), padded(v)
    s = torch.einsum("bhmd,bhnd->bhmn", qp, kp).masked_fill(~mask[:, None, None, :], float("-inf"))
    m = s.amax(-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    denom = e.sum(-1, keepdim=True)
    a = e / torch.where(denom > 0, denom, torch.ones_like(denom)) / n
    keep = mask[:, None, :, None]
    if causal:  # upstream's use_mask: keys n >= query m
        idx = torch.arange(n, device=q.device)
        keep = keep & (idx[None, :] >= idx[:, None])
    out_p = torch.einsum("bhmn,bhnd->bhmd", a * keep, vp)
    lse_p = (m + torch.log(denom)).squeeze(-1).detach()  # [B, H, n]
    batch = out_p.size(0)
    out = unpad_rows(out_p.transpose(1, 2).reshape(batch, n, heads * d), offsets, total)
    lse = unpad_rows(lse_p.transpose(1, 2), offsets, total)
    return out.reshape(total, heads, d).transpose(0, 1), lse.transpose(0, 1)


@dataclass(frozen=True)
class BasicCase(Case):
    """A case plus upstream's `use_mask` flag (keep only keys n >= query m): it changes what is
    computed, not how much, so launchers match frozen configs on the shape alone."""

    use_mask: bool = False


def next_d(case: Case) -> int:
    return max(16, next_pow2(case.shape["D"]))


def fwd_tiles(config: Config, case: Case) -> int:
    bm, bn, bd = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_D"]
    nd, e = next_d(case), case.torch_dtype.itemsize
    # q, k slices, v, p in the input dtype; qk, p, acc and m, l in fp32.
    return e * (bm * bd + bd * bn + bn * nd + bm * bn) + 4 * (2 * bm * bn + bm * nd + 3 * bm)


def fwd_stream(config: Config, case: Case) -> int:
    bm, bn, bd = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_D"]
    return case.torch_dtype.itemsize * (bm * bd + bd * bn + bn * next_d(case))


def pre_tiles(config: Config, case: Case) -> int:
    bm, bd, e = config["BLOCK_M"], config["BLOCK_D"], case.torch_dtype.itemsize
    # out may be the forward's fp32 output.
    return (4 + e) * bm * bd + 4 * (bm * bd + bm)


def pre_stream(config: Config, case: Case) -> int:
    return (4 + case.torch_dtype.itemsize) * config["BLOCK_M"] * config["BLOCK_D"]


def bwd_tiles(config: Config, case: Case) -> int:
    bm, bn = config["BLOCK_M"], config["BLOCK_N"]
    bd, e = next_d(case), case.torch_dtype.itemsize
    # k, v (resident), q, do (streamed), p and ds casts in the input dtype; dk, dv, qk, p, dp, ds,
    # lse, delta in fp32 (the dq phase holds the same sizes with M and N swapped).
    return e * (2 * bn * bd + 2 * bm * bd + 2 * bm * bn) + 4 * (2 * bn * bd + 4 * bm * bn + 2 * bm)


def bwd_stream(config: Config, case: Case) -> int:
    bm, bd = config["BLOCK_M"], next_d(case)
    return case.torch_dtype.itemsize * 2 * bm * bd + 8 * bm


def fwd_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """qk += q kt over BLOCK_D slices, pv = p v (p from the softmax): all inside the loop over
    BLOCK_N keys."""
    bm, bn, bd = config["BLOCK_M"], config["BLOCK_N"], config["BLOCK_D"]
    e = case.torch_dtype.itemsize
    return Dot(bm, bn, bd, e), Dot(bm, next_d(case), bn, e, vector="a", vector_rows=(bn,))


def bwd_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """The dk, dv phase (BLOCK_N keys, k and v loaded before the loop over BLOCK_M queries):
    qk = q k^T, dp = do v^T, dv += p^T do, dk += ds^T q (p and ds computed by the vector
    code; dv and dk only accumulate). The dq phase's dots are no larger."""
    bm, bn, bd, e = config["BLOCK_M"], config["BLOCK_N"], next_d(case), case.torch_dtype.itemsize
    return (
        Dot(bm, bn, bd, e, fixed="b"),
        Dot(bm, bn, bd, e, fixed="b"),
        Dot(bn, bd, bm, e, vector="a", stored=True, vector_rows=(bn,)),
        Dot(bn, bd, bm, e, vector="a", stored=True, vector_rows=(bn,)),
    )


def _m_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_M"]), case.shape["B"]


def _n_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_N"]), case.shape["B"]


def _seq_fits(name: str) -> Callable:
    return BlockFits(name, lambda c: max(16, next_pow2(c.shape["max_seq_len"])), "max_seq_len")


D_FITS = BlockFits("BLOCK_D", next_d, "D")

# (B, max_seq_len, D, lengths, use_mask): B=1, an empty sequence, truncation past max_seq_len,
# max_seq_len not a multiple of any block, a D that is not a power of two, both mask settings.
ACCURACY_SHAPES = (
    (1, 16, 16, (16,), False),
    (4, 16, 32, (0, 5, 16, 23), True),
    (3, 40, 24, (40, 0, 57), False),
)
# Recommendation-sized: B up to 2048, max_seq_len 256-2048, D 64-256.
PERFORMANCE_SHAPES = (
    (1024, 256, 128, "bfloat16", False),
    (512, 1024, 64, "float32", True),
    (2048, 256, 256, "bfloat16", False),
    (256, 2048, 128, "float16", True),
)


def uses_tf32(case: Case) -> bool:
    """fp32 performance cases run as upstream's public wrapper does (allow_tf32=True); accuracy
    cases keep strict fp32 dots."""
    return case.kind == "performance" and case.dtype == "float32"


def _use_mask(case: Case) -> bool:
    return getattr(case, "use_mask", False)


def self_attention_traffic(
    case: Case, part: str, heads: int = 1, use_mask: bool = False
) -> tuple[int, int]:
    """Self-attention inside each sequence, per head: M_b = min(len_b, max_seq_len) rows used,
    E = sum M_b, R = sum_L rows; q, k, v, out, dout [heads, R, D].

    Pairs: all = sum M_b^2 (the softmax spans every key), kept = the pairs that reach the output
    (sum M_b (M_b + 1) / 2 with use_mask, keys n >= query m; else all).
    fwd: q, k, v (E x D) read, out (R x D, zeros past max_seq_len) and lse (R, fp32) written;
    flops 2 D (all + kept): S = q k^T over all pairs, P v over the kept ones.
    bwd: q, k, v, dout (E x D) read, out (E x D) read in fp32 (the part is given the forward's
    fp32 output), lse (E) read, delta (E, fp32) written and read, dq, dk, dv (R x D) written;
    flops 2 D (3 all + 2 kept): S recomputed, dq = dS k and dk = dS^T q over all pairs,
    dP = dout v^T and dv = P^T dout over the kept ones (2.5x the forward's without a mask).
    """
    d = case.shape["D"]
    used = effective_lengths(case)
    e, r = sum(used), total_rows(case)
    pairs = sum(m * m for m in used)
    kept = sum(m * (m + 1) // 2 for m in used) if use_mask else pairs
    size = case.torch_dtype.itemsize
    if part == "fwd":
        moved = (3 * e * d + r * d) * size + r * FP32
        return heads * moved, heads * 2 * d * (pairs + kept)
    moved = 4 * e * d * size + e * d * FP32 + 3 * e * FP32 + 3 * r * d * size
    return heads * moved, heads * 2 * d * (3 * pairs + 2 * kept)


def _valid_rows(offsets: torch.Tensor, max_seq_len: int, total: int) -> torch.Tensor:
    """Mask of the jagged rows within the first max_seq_len rows of their sequence."""
    offsets = offsets.cpu().long()
    lengths = offsets[1:] - offsets[:-1]
    within = torch.arange(total) - torch.repeat_interleave(offsets[:-1], lengths, output_size=total)
    return within < max_seq_len


class JaggedFlashAttentionBasic(OpSpec):
    name = NAME
    summary = (
        "Self-attention inside jagged sequences, probabilities scaled by 1/max_seq_len, optional "
        "n >= m mask; forward and backward"
    )
    upstream = Upstream(
        file="sll/triton/triton_jagged_flash_attention_basic.py",
        sha256="b1500b0a36602be1f0819e0ca5fb601fc68cce5d7702fb7246ce92da9438bbb6",
        functions=("jagged_flash_attention_basic_fwd", "jagged_flash_attention_basic_backward"),
        lines="17-668",
    )
    shape_keys = ("B", "max_seq_len", "D")
    input_names = ("q", "k", "v", "offsets", "max_seq_len", "use_mask", "dout")
    output_names = ("out", "lse", "dq", "dk", "dv")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=(BLOCK_M, BLOCK_N, FWD_BLOCK_D, NUM_WARPS, NUM_STAGES, MULTIBUFFER),
            outputs=("out", "lse"),
            default=lambda c: {
                "BLOCK_M": 32,
                "BLOCK_N": 32,
                "BLOCK_D": 32,
                "num_warps": 4,
                "num_stages": 3,
            },
            grid=_m_blocks,
            tile_bytes=fwd_tiles,
            stream_bytes=fwd_stream,
            constraints=(_seq_fits("BLOCK_M"), _seq_fits("BLOCK_N"), D_FITS),
            dots=fwd_dots,
            port_kernel="_fwd_kernel",
            upstream_kernel="jagged_flash_attention_basic_kernel",
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
            upstream_kernel="_jagged_flash_attention_bwd_preprocess_basic_kernel",
        ),
        KernelSpec(
            name="bwd",
            tunables=(BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, MULTIBUFFER),
            outputs=("dq", "dk", "dv"),
            default=lambda c: {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4, "num_stages": 3},
            grid=_n_blocks,
            tile_bytes=bwd_tiles,
            stream_bytes=bwd_stream,
            constraints=(_seq_fits("BLOCK_M"), _seq_fits("BLOCK_N")),
            dots=bwd_dots,
            port_kernel="_bwd_kernel",
            upstream_kernel="_jagged_flash_attention_bwd_basic_kernel",
        ),
    )

    def make_case(self, shape, dtype, lengths, kind, offsets=None, use_mask=False) -> Case:
        b, n, d = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_{SHORT_DTYPE[dtype]}" + ("_mask" if use_mask else "")
        return BasicCase(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets, use_mask)

    def cases(self, kind: CaseKind) -> list[Case]:
        keys = self.shape_keys
        if kind == "accuracy":
            return [
                self.make_case(
                    dict(zip(keys, (b, n, d), strict=True)), dtype, lengths, kind, None, mask
                )
                for b, n, d, lengths, mask in ACCURACY_SHAPES
                for dtype in self.dtypes
            ]
        return [
            self.make_case(
                dict(zip(keys, (b, n, d), strict=True)),
                dtype,
                skewed_lengths(b, n),
                kind,
                None,
                mask,
            )
            for b, n, d, dtype, mask in PERFORMANCE_SHAPES
        ]

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        d = case.shape["D"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = case_offsets(case, torch.device("cpu"))
        rows = int(offsets[-1])
        dtype = case.torch_dtype
        tensors = {
            "q": torch.randn(rows, d, generator=gen) / d**0.5,
            "k": torch.randn(rows, d, generator=gen),
            "v": torch.randn(rows, d, generator=gen),
            "dout": torch.randn(rows, d, generator=gen),
        }
        out = {name: x.to(dtype).to(device) for name, x in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(case.shape["max_seq_len"])
        out["use_mask"] = torch.tensor(_use_mask(case))
        out["allow_tf32"] = torch.tensor(uses_tf32(case))
        return out

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        one_head = {name: inputs[name][None] for name in ("q", "k", "v", "dout")}
        golden = attention_reference(
            {**inputs, **one_head}, compute_dtype, causal=bool(inputs.get("use_mask", False))
        )
        return {name: value[0] for name, value in golden.items()}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """self_attention_traffic with one head and the case's use_mask."""
        return self_attention_traffic(case, part, use_mask=_use_mask(case))

    def tolerance_for(self, case: Case) -> float:
        return 5e-3 if uses_tf32(case) else self.tolerance[case.dtype]

    def comparable(self, name: str, tensor: torch.Tensor, inputs: Tensors) -> torch.Tensor:
        if name in ("lse", "delta"):  # defined for the first max_seq_len rows of a sequence only
            valid = _valid_rows(inputs["offsets"], int(inputs["max_seq_len"]), tensor.size(0))
            return tensor[valid.to(tensor.device)]
        return tensor

    @staticmethod
    def _args(inputs: Tensors) -> tuple:
        return (
            inputs["q"],
            inputs["k"],
            inputs["v"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
            bool(inputs["use_mask"]),
            bool(inputs["allow_tf32"]),
        )

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(NAME)
        q, k, v, offsets, n, use_mask, tf32 = self._args(inputs)
        # As the autograd function: the backward reads the forward's unrounded fp32 output.
        out, lse = port.jagged_flash_attention_basic_fwd(
            q, k, v, offsets, n, use_mask, tf32, config=configs.get("fwd"), out_dtype=torch.float32
        )
        dq, dk, dv = port.jagged_flash_attention_basic_bwd(
            q, k, v, out, offsets, inputs["dout"], lse, n, use_mask, tf32, configs=configs
        )
        return {"out": out.to(q.dtype), "lse": lse, "dq": dq, "dk": dk, "dv": dv}

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        if case.dtype == "bfloat16" and os.environ.get("TRITON_INTERPRET") == "1":
            # Upstream's backward keeps lse and delta in bf16 and does elementwise arithmetic on
            # them, which the interpreter runs on bf16's uint16 bit patterns: dq, dk are garbage.
            return ("out", "lse", "dv")
        return ("out", "lse", "dq", "dk", "dv")

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, offsets, n, use_mask, tf32 = self._args(inputs)
        out, lse = up.jagged_flash_attention_basic_fwd(q, k.T, v, offsets, n, use_mask, tf32)
        dq, dk, dv = up.jagged_flash_attention_basic_backward(
            q, k, v, out, offsets, inputs["dout"], lse, n, use_mask, tf32
        )
        result = {"out": out, "lse": lse, "dq": dq, "dk": dk, "dv": dv}
        return {name: result[name] for name in self.upstream_outputs(case)}

    parts = {"fwd": ("fwd",), "bwd": ("bwd_preprocess", "bwd")}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(NAME)
        q, k, v, offsets, n, use_mask, tf32 = self._args(inputs)
        configs = configs or {}
        if part == "fwd":
            return lambda: port.jagged_flash_attention_basic_fwd(
                q, k, v, offsets, n, use_mask, tf32, config=configs.get("fwd")
            )
        out, lse = port.jagged_flash_attention_basic_fwd(
            q, k, v, offsets, n, use_mask, tf32, config=configs.get("fwd"), out_dtype=torch.float32
        )
        dout = inputs["dout"]
        return lambda: port.jagged_flash_attention_basic_bwd(
            q, k, v, out, offsets, dout, lse, n, use_mask, tf32, configs=configs
        )

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, offsets, n, use_mask, tf32 = self._args(inputs)
        if part == "fwd":
            return lambda: up.jagged_flash_attention_basic_fwd(
                q, k.T, v, offsets, n, use_mask, tf32
            )
        out, lse = up.jagged_flash_attention_basic_fwd(q, k.T, v, offsets, n, use_mask, tf32)
        dout = inputs["dout"]
        return lambda: up.jagged_flash_attention_basic_backward(
            q, k, v, out, offsets, dout, lse, n, use_mask, tf32
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
        q, k, v, offsets, n, use_mask, tf32 = self._args(inputs)
        if kernel == "fwd":
            out, lse = port.jagged_flash_attention_basic_fwd(
                q, k, v, offsets, n, use_mask, tf32, config=config
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
                q, k, v, offsets, n, inputs["dout"], inputs["lse"], inputs["delta"], use_mask,
                tf32, config=config,
            )  # fmt: skip
            return {"dq": dq, "dk": dk, "dv": dv}
        raise ValueError(f"unknown kernel {kernel!r}")


SPEC = JaggedFlashAttentionBasic()
