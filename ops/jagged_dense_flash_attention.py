"""jagged_dense_flash_attention: attention of a jagged q/v against a dense k, softmax over the sequence.

out[b, t] = sum_l softmax_l(q[b, l] . k[b, :, t] + bias[b, l, t]) v[b, l], for l < min(len_b, max_seq_len).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import load

from .cases import FP32, case_offsets, effective_lengths, standard_cases, total_rows
from .jagged import pad_rows
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

NAME = "jagged_dense_flash_attention"

BLOCK_T = Tunable("BLOCK_T", pow2_range(16, 128))
BLOCK_L = Tunable("BLOCK_L", pow2_range(16, 128))
# The attention kernels' grid is the 96-config one DESIGN.md measured on an H200; the
# preprocess (no dot, no pipelined loop worth the name) gets all warp counts and no stages.
# MULTIBUFFER joins the space on Ascend only (a backend leaves out the options it does not know).
NUM_WARPS = Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION)
NUM_STAGES = Tunable("num_stages", (2, 3), role=Role.LAUNCH_OPTION)


def _dims(config: Config, case: Case) -> tuple[int, int, int, int]:
    """(BLOCK_T, BLOCK_L, BLOCK_D, element bytes) of a config on a case."""
    block_d = max(16, next_pow2(case.shape["D"]))
    return config.get("BLOCK_T", 32), config.get("BLOCK_L", 32), block_d, case.torch_dtype.itemsize


def _fwd_tiles(config: Config, case: Case) -> int:
    bt, bl, bd, e = _dims(config, case)
    return e * (bd * bt + 2 * bl * bd + bl * bt) + 4 * (bl * bt + bt * bd + 2 * bt)


def _fwd_stream(config: Config, case: Case) -> int:
    bt, bl, bd, e = _dims(config, case)
    return e * (2 * bl * bd + bl * bt)


def _pre_tiles(config: Config, case: Case) -> int:
    bt, bd, e = config["BLOCK_T"], config["BLOCK_D"], case.torch_dtype.itemsize
    return 2 * e * bt * bd + 4 * (bt * bd + bt)


def _pre_stream(config: Config, case: Case) -> int:
    return 2 * case.torch_dtype.itemsize * config["BLOCK_T"] * config["BLOCK_D"]


def _dq_tiles(config: Config, case: Case) -> int:
    bt, bl, bd, e = _dims(config, case)
    return e * (2 * bl * bd + 2 * bd * bt + bl * bt) + 4 * (2 * bt + 2 * bl * bt + 2 * bl * bd)


def _dq_stream(config: Config, case: Case) -> int:
    bt, bl, bd, e = _dims(config, case)
    return e * (2 * bd * bt + bl * bt) + 8 * bt


def _dk_tiles(config: Config, case: Case) -> int:
    bt, bl, bd, e = _dims(config, case)
    return e * (2 * bd * bt + 2 * bl * bd + bl * bt) + 4 * (2 * bt + bd * bt + 2 * bl * bt)


def _fwd_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """s = q k (k loaded before the loop over BLOCK_L rows), pv = p^T v (p from the softmax)."""
    bt, bl, bd, e = _dims(config, case)
    return Dot(bl, bt, bd, e, fixed="b"), Dot(bt, bd, bl, e, vector="a", vector_rows=(bt,))


def _dq_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """s = q k, dv += p do, dp = v do^T, dq += ds k^T; q and v loaded before the loop over T,
    p and ds computed by the vector code; dv and dq only accumulate."""
    bt, bl, bd, e = _dims(config, case)
    return (
        Dot(bl, bt, bd, e, fixed="a"),
        Dot(bl, bd, bt, e, vector="a", stored=True, vector_rows=(bt,)),
        Dot(bl, bt, bd, e, fixed="a"),
        Dot(bl, bd, bt, e, vector="a", stored=True, vector_rows=(bt,)),
    )


def _dk_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """s = q k, dp = v do^T, dk += q^T ds; k and do loaded before the loop over BLOCK_L rows, ds
    computed by the vector code; dk only accumulates."""
    bt, bl, bd, e = _dims(config, case)
    return (
        Dot(bl, bt, bd, e, fixed="b"),
        Dot(bl, bt, bd, e, fixed="b"),
        Dot(bd, bt, bl, e, vector="b", stored=True, vector_rows=(bt,)),
    )


def _t_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["T"] // config["BLOCK_T"]), case.shape["B"]


def _l_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_L"]), case.shape["B"]


def _upstream_default(case: Case) -> Config:
    """Upstream launches with BLOCK_T = BLOCK_L = 32 and Triton's num_warps=4, num_stages=3."""
    return {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3}


T_FITS = BlockFits("BLOCK_T", lambda c: max(16, next_pow2(c.shape["T"])), "T")
L_FITS = BlockFits("BLOCK_L", lambda c: max(16, next_pow2(c.shape["max_seq_len"])), "max_seq_len")
D_FITS = BlockFits("BLOCK_D", lambda c: max(16, next_pow2(c.shape["D"])), "D")

ATTENTION_TUNABLES = (BLOCK_T, BLOCK_L, NUM_WARPS, NUM_STAGES, MULTIBUFFER)

# (B, max_seq_len, D, T, lengths): B=1, empty sequences, truncation past max_seq_len, T and
# max_seq_len not multiples of any block, and a D that is not a power of two (upstream cannot).
ACCURACY_SHAPES = (
    (1, 16, 16, 16, (16,)),
    (4, 16, 32, 20, (0, 5, 16, 23)),
    (3, 40, 64, 33, (40, 0, 57)),
    (5, 24, 24, 8, (1, 24, 0, 30, 7)),
)
# Recommendation-sized: B up to 2048, max_seq_len 256-2048, D 64-256, T 32-256.
PERFORMANCE_SHAPES = (
    (1024, 256, 128, 128, "bfloat16"),
    (512, 1024, 64, 256, "float32"),
    (2048, 512, 256, 32, "bfloat16"),
    (256, 2048, 128, 256, "float16"),
)


def uses_tf32(case: Case) -> bool:
    """fp32 performance cases run as upstream's public `jagged_dense_flash_attention` does
    (allow_tf32=True); accuracy cases keep strict fp32 dots."""
    return case.kind == "performance" and case.dtype == "float32"


class JaggedDenseFlashAttention(OpSpec):
    name = NAME
    summary = (
        "Flash attention of jagged q, v against dense k with a dense bias; forward and backward"
    )
    upstream = Upstream(
        file="sll/triton/triton_jagged_dense_flash_attention.py",
        sha256="1c22e8954e6526c5e10af5155774c31d6384cf2ef9f84cdc4fed9706c255f0f9",
        functions=("jagged_dense_flash_attention_fwd", "jagged_dense_flash_attention_bwd"),
        lines="17-864",
    )
    shape_keys = ("B", "max_seq_len", "D", "T")
    input_names = ("q", "k", "v", "attn_bias", "offsets", "max_seq_len", "dout")
    output_names = ("out", "lse", "dq", "dk", "dv", "dbias")
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=ATTENTION_TUNABLES,
            outputs=("out", "lse"),
            default=_upstream_default,
            grid=_t_blocks,
            tile_bytes=_fwd_tiles,
            stream_bytes=_fwd_stream,
            constraints=(T_FITS, L_FITS),
            dots=_fwd_dots,
            port_kernel="_fwd_kernel",
            upstream_kernel="jagged_dense_flash_attention_fwd_kernel",
        ),
        KernelSpec(
            name="bwd_preprocess",
            tunables=(
                Tunable("BLOCK_T", pow2_range(16, 256)),
                Tunable("BLOCK_D", pow2_range(16, 256)),
                Tunable("num_warps", (1, 2, 4, 8), role=Role.LAUNCH_OPTION),
                MULTIBUFFER,
            ),
            outputs=("delta",),
            default=lambda c: {
                "BLOCK_T": 32,
                "BLOCK_D": max(16, next_pow2(c.shape["D"])),
                "num_warps": 4,
            },
            grid=_t_blocks,
            tile_bytes=_pre_tiles,
            stream_bytes=_pre_stream,
            constraints=(T_FITS, D_FITS),
            port_kernel="_bwd_preprocess_kernel",
            upstream_kernel="_bwd_preprocess_do_o_dot",
        ),
        KernelSpec(
            name="bwd_dv_db_dq",
            tunables=ATTENTION_TUNABLES,
            outputs=("dq", "dv", "dbias"),
            default=_upstream_default,
            grid=_l_blocks,
            tile_bytes=_dq_tiles,
            stream_bytes=_dq_stream,
            constraints=(T_FITS, L_FITS),
            dots=_dq_dots,
            port_kernel="_bwd_dv_db_dq_kernel",
            upstream_kernel="_jagged_dense_flash_attention_bwd_dv_db_dq_kernel",
        ),
        KernelSpec(
            name="bwd_dk",
            tunables=ATTENTION_TUNABLES,
            outputs=("dk",),
            default=_upstream_default,
            grid=_t_blocks,
            tile_bytes=_dk_tiles,
            stream_bytes=_fwd_stream,
            constraints=(T_FITS, L_FITS),
            dots=_dk_dots,
            port_kernel="_bwd_dk_kernel",
            upstream_kernel="_jagged_dense_flash_attention_bwd_dk_kernel",
        ),
    )

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, n, d, t = (shape[k] for k in self.shape_keys)
        name = f"b{b}_n{n}_d{d}_t{t}_{SHORT_DTYPE[dtype]}"
        return Case(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        return standard_cases(self, kind, ACCURACY_SHAPES, PERFORMANCE_SHAPES)

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        b, n, d, t = (case.shape[k] for k in self.shape_keys)
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = case_offsets(case, torch.device("cpu"))
        rows = int(offsets[-1])
        dtype = case.torch_dtype
        tensors = {
            "q": torch.randn(rows, d, generator=gen) / d**0.5,
            "k": torch.randn(b, d, t, generator=gen),
            "v": torch.randn(rows, d, generator=gen),
            "attn_bias": torch.randn(b, n, t, generator=gen),
            "dout": torch.randn(b, t, d, generator=gen),
        }
        out = {name: x.to(dtype).to(device) for name, x in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["max_seq_len"] = torch.tensor(n)
        out["allow_tf32"] = torch.tensor(uses_tf32(case))
        return out

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n = int(inputs["max_seq_len"])
        offsets = inputs["offsets"]
        q, k, v, bias = (
            inputs[x].to(compute_dtype).detach().requires_grad_()
            for x in ("q", "k", "v", "attn_bias")
        )
        qp, mask = pad_rows(q, offsets, n)
        vp, _ = pad_rows(v, offsets, n)
        s = torch.einsum("bnd,bdt->bnt", qp, k) + bias[:, :n]
        s = s.masked_fill(~mask[..., None], float("-inf"))
        m = s.amax(1, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        e = torch.exp(s - m)
        denom = e.sum(1, keepdim=True)
        out = torch.einsum(
            "bnt,bnd->btd", e / torch.where(denom > 0, denom, torch.ones_like(denom)), vp
        )
        lse = (m + torch.log(denom)).squeeze(1)
        dout = inputs["dout"].to(compute_dtype)
        out.backward(dout)
        return {
            "out": out.detach(),
            "lse": lse.detach(),
            "dq": q.grad,
            "dk": k.grad,
            "dv": v.grad,
            "dbias": bias.grad,
            "delta": (out.detach() * dout).sum(-1),
        }

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """E = sum_b min(len_b, max_seq_len) rows used, R = sum_L rows; q, v [R, D] jagged,
        k [B, D, T], bias [B, N, T] (its E valid rows used), out and dout [B, T, D].
        fwd: q, v (E x D), k, bias (E x T) read; out written, lse [B, T] fp32 written. Flops: the
        dots S = q k and out = P^T v over the E x T valid (row, t) pairs, 2 * 2 E D T.
        bwd: q, v, k, bias, dout read; out read in fp32 (the part is given the forward's fp32
        output), lse read, delta [B, T] fp32 written and read; dq, dv (R x D), dk and dbias
        (B x N x T, zeros past the sequence) written. Flops: the dots S (recomputed), dP, dv, dq
        and dk, 5 * 2 E D T (the port's bwd_dk recomputes S and dP: not counted)."""
        b, n, d, t = (case.shape[k] for k in self.shape_keys)
        e, r = sum(effective_lengths(case)), total_rows(case)
        size = case.torch_dtype.itemsize
        dot = 2 * e * d * t
        inputs = (2 * e * d + b * d * t + e * t) * size
        if part == "fwd":
            return inputs + b * t * d * size + b * t * FP32, 2 * dot
        reads = inputs + b * t * d * (size + FP32) + b * t * FP32
        writes = (2 * r * d + b * d * t + b * n * t) * size + 2 * b * t * FP32  # delta: w + r
        return reads + writes, 5 * dot

    def tolerance_for(self, case: Case) -> float:
        return 5e-3 if uses_tf32(case) else self.tolerance[case.dtype]

    def comparable(self, name: str, tensor: torch.Tensor, inputs: Tensors) -> torch.Tensor:
        if name == "lse":  # undefined for an empty sequence
            offsets = inputs["offsets"].to(tensor.device)
            return tensor[(offsets[1:] - offsets[:-1]) > 0]
        return tensor

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        port = load_port(NAME)
        args = (
            inputs["q"],
            inputs["k"],
            inputs["v"],
            inputs["attn_bias"],
            inputs["offsets"],
            int(inputs["max_seq_len"]),
            bool(inputs["allow_tf32"]),
        )
        # As the autograd function: the backward reads the forward's unrounded fp32 output.
        out, lse = port.jagged_dense_flash_attention_fwd(
            *args, config=configs.get("fwd"), out_dtype=torch.float32
        )
        q, k, v, bias, offsets, n, tf32 = args
        dq, dk, dv, dbias = port.jagged_dense_flash_attention_bwd(
            q, k, v, out, lse, inputs["dout"], bias, offsets, n, tf32, configs=configs
        )
        return {"out": out.to(q.dtype), "lse": lse, "dq": dq, "dk": dk, "dv": dv, "dbias": dbias}

    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        d = case.shape["D"]
        if d & (d - 1):  # upstream asserts D is a power of two
            return ()
        if case.dtype != "float32":  # upstream's backward mixes fp32 and input-dtype dot operands
            return ("out", "lse")
        return ("out", "lse", "dq", "dk", "dv", "dbias")

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        produced = self.upstream_outputs(case)
        if not produced:
            return {}
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, bias, offsets = (inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets"))
        n, tf32 = int(inputs["max_seq_len"]), bool(inputs["allow_tf32"])
        out, lse = up.jagged_dense_flash_attention_fwd(q, k, v, bias, offsets, n, allow_tf32=tf32)
        result = {"out": out, "lse": lse}
        if "dq" in produced:
            dq, dk, dv, dbias = up.jagged_dense_flash_attention_bwd(
                q, k, v, out, lse, inputs["dout"], bias, offsets, n, allow_tf32=tf32
            )
            result.update(dq=dq, dk=dk, dv=dv, dbias=dbias)
        return result

    parts = {"fwd": ("fwd",), "bwd": ("bwd_preprocess", "bwd_dv_db_dq", "bwd_dk")}

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        port = load_port(NAME)
        q, k, v, bias, offsets = (inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets"))
        n, tf32 = int(inputs["max_seq_len"]), bool(inputs["allow_tf32"])
        configs = configs or {}
        if part == "fwd":
            return lambda: port.jagged_dense_flash_attention_fwd(
                q, k, v, bias, offsets, n, tf32, config=configs.get("fwd")
            )
        out, lse = port.jagged_dense_flash_attention_fwd(
            q, k, v, bias, offsets, n, tf32, config=configs.get("fwd"), out_dtype=torch.float32
        )
        dout = inputs["dout"]
        return lambda: port.jagged_dense_flash_attention_bwd(
            q, k, v, out, lse, dout, bias, offsets, n, tf32, configs=configs
        )

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        produced = self.upstream_outputs(case)
        if not produced or (part == "bwd" and "dq" not in produced):
            return None
        up = load(self.upstream.file, self.upstream.sha256)
        q, k, v, bias, offsets = (inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets"))
        n, tf32 = int(inputs["max_seq_len"]), bool(inputs["allow_tf32"])
        if part == "fwd":
            return lambda: up.jagged_dense_flash_attention_fwd(
                q, k, v, bias, offsets, n, allow_tf32=tf32
            )
        out, lse = up.jagged_dense_flash_attention_fwd(q, k, v, bias, offsets, n, allow_tf32=tf32)
        dout = inputs["dout"]
        return lambda: up.jagged_dense_flash_attention_bwd(
            q, k, v, out, lse, dout, bias, offsets, n, allow_tf32=tf32
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
        q, k, v, bias, offsets = (inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets"))
        n, tf32 = int(inputs["max_seq_len"]), bool(inputs["allow_tf32"])
        if kernel == "fwd":
            out, lse = port.jagged_dense_flash_attention_fwd(
                q, k, v, bias, offsets, n, tf32, config=config
            )
            return {"out": out, "lse": lse}
        if kernel == "bwd_preprocess":
            return {"delta": port.bwd_preprocess(inputs["out"], inputs["dout"], n, config=config)}
        args = (q, k, v, bias, offsets, n, inputs["dout"], inputs["lse"], inputs["delta"], tf32)
        if kernel == "bwd_dv_db_dq":
            dq, dv, dbias = port.bwd_dv_db_dq(*args, config=config)
            return {"dq": dq, "dv": dv, "dbias": dbias}
        if kernel == "bwd_dk":
            return {"dk": port.bwd_dk(*args, config=config)}
        raise ValueError(f"unknown kernel {kernel!r}")


SPEC = JaggedDenseFlashAttention()
