"""hstu_attention (recsys-examples' Triton `triton_hstu_mha` and `triton_cached_hstu_mha`): HSTU's
jagged causal attention with SiLU-activated scores; forward, backward (dq, dk, dv) and the cached
forward of inference.

Per sequence b of length L and head h, over positions m, n < L:
    out[m] = sum_n valid(m, n) * silu(alpha * q[m] . k[n]) / scaling_seqlen * v[n]
valid is upstream's kernel mask (`valid_mask`): causal over position ids, where the first
`contextual` positions share id 0 (and see every non-target position), the last num_targets[b]
positions share the first target's id (so targets see the history and themselves, not each
other), and with `window` > 0 only ids at most `window` apart. scaling_seqlen is max_seq_len.
The cached forward computes the same rows for the last DeltaSize positions of each sequence of a
KV cache, from new queries delta_q.

The mask parameters are facts of the case, in its shape: `targets` (1: random per-sequence
num_targets, 0: none), `contextual` (contextual_seq_len) and `window` (max_attn_len).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable

import torch

from core.upstream import RECSYS_EXAMPLES

from .cases import effective_lengths, total_rows
from .jagged import offsets_from_lengths, skewed_lengths
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
from .tma import tma_missing
from .tunable import Role, Tunable

NAME = "hstu_attention"

BLOCK_M = Tunable("BLOCK_M", pow2_range(16, 128))
BLOCK_N = Tunable("BLOCK_N", pow2_range(16, 128))
# Upstream's lists (`_get_fw_configs`, `_get_bw_configs`) use 2-8 warps and 1-4 stages.
NUM_WARPS = Tunable("num_warps", (2, 4, 8), role=Role.LAUNCH_OPTION)
NUM_STAGES = Tunable("num_stages", (1, 2, 3, 4), role=Role.LAUNCH_OPTION)
TUNABLES = (BLOCK_M, BLOCK_N, NUM_WARPS, NUM_STAGES, MULTIBUFFER)
#: The backward's two forms (upstream's `SEQUENCE_PARALLEL`): a program per (sequence, head)
#: walking its key blocks, or a program per key block adding its dq by atomics.
SEQUENCE_PARALLEL = Tunable("SEQUENCE_PARALLEL", (False, True), role=Role.LAUNCHER_ARGUMENT)
BWD_TUNABLES = (BLOCK_M, BLOCK_N, SEQUENCE_PARALLEL, NUM_WARPS, NUM_STAGES, MULTIBUFFER)

#: Targets a sequence has at most (upstream's tests draw 1-10), fewer where it is short.
MAX_TARGETS = 10

# (B, H, max_seq_len, D, targets, contextual, window, lengths): B=1; lengths 0 and 1 with
# max_seq_len not a power of two; head dims 32, 64, 128 and 24 (not a power of two: upstream's
# blocks are the head dim, so upstream cannot run it); targets with and without contextual
# positions and the window.
ACCURACY_SHAPES = (
    (1, 2, 16, 32, 0, 0, 0, (16,)),
    (4, 1, 40, 64, 1, 0, 0, (0, 1, 40, 23)),
    (3, 2, 36, 128, 1, 4, 0, (36, 9, 20)),
    (3, 2, 40, 32, 0, 4, 8, (40, 0, 17)),
    (2, 2, 40, 24, 1, 0, 6, (33, 40)),
)
# HSTU sizes: B 32-256, max_seq_len 256-4096 (skewed lengths), 2-8 heads, D 64-128.
PERFORMANCE_SHAPES = (
    (256, 4, 256, 64, 1, 0, 0, "bfloat16"),
    (128, 4, 1024, 128, 1, 4, 0, "bfloat16"),
    (64, 2, 2048, 128, 0, 0, 0, "float16"),
    (32, 8, 4096, 64, 1, 0, 512, "bfloat16"),
)


def cached_queries(case: Case) -> int:
    """DeltaSize of the cached forward: new queries per sequence, max_seq_len / 16 (at least 1)."""
    return max(1, case.shape["max_seq_len"] // 16)


def valid_mask(
    length: int, targets: int, contextual: int, window: int, device: torch.device
) -> torch.Tensor:
    """[L, L] bool: which (row, column) positions of one sequence attend (upstream's kernel mask,
    `_hstu_attn_fwd_one_block`; its PyTorch reference applies the window to the unclamped ids)."""
    ids = torch.arange(length, device=device)
    rows, cols = ids[:, None], ids[None, :]
    diagonal = rows == cols
    max_ids = length
    if contextual > 0:
        rows, cols = (rows - contextual + 1).clamp_min(0), (cols - contextual + 1).clamp_min(0)
        max_ids = max_ids - contextual + 1
    if targets >= 0:
        max_ids = max_ids - targets
        rows, cols = rows.clamp_max(max_ids), cols.clamp_max(max_ids)
    distance = rows - cols
    valid = diagonal | (distance > 0)
    if window > 0:
        valid = valid & (distance <= window)
    if contextual > 0:
        valid = valid | ((rows == 0) & (cols < max_ids))
    return valid


def _block_d(case: Case) -> int:
    return max(16, next_pow2(case.shape["D"]))


def _sizes(config: Config, case: Case) -> tuple[int, int, int, int]:
    return config["BLOCK_M"], config["BLOCK_N"], _block_d(case), case.torch_dtype.itemsize


def fwd_tiles(config: Config, case: Case) -> int:
    bm, bn, bd, e = _sizes(config, case)
    # q, k, v and p in the input dtype; qk, p, the mask's ids and acc in fp32 (int32).
    return e * (bm * bd + 2 * bn * bd + bm * bn) + 4 * (3 * bm * bn + bm * bd)


def fwd_stream(config: Config, case: Case) -> int:
    _, bn, bd, e = _sizes(config, case)
    return 2 * e * bn * bd


def fwd_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """qk = q k^T (q loaded before the loop), then acc += p v with p from the vector code."""
    bm, bn, bd, e = _sizes(config, case)
    return Dot(bm, bn, bd, e, fixed="a"), Dot(bm, bd, bn, e, vector="a", vector_rows=(bn,))


def bwd_tiles(config: Config, case: Case) -> int:
    bm, bn, bd, e = _sizes(config, case)
    # k, v (per key block), q, do, dq, p and ds in the input dtype (dq in fp32); dk, dv, qk, sig,
    # dp, ds and the mask in fp32.
    return e * (2 * bn * bd + 2 * bm * bd + 2 * bm * bn) + 4 * (2 * bn * bd + bm * bd + 5 * bm * bn)


def bwd_stream(config: Config, case: Case) -> int:
    bm, _, bd, e = _sizes(config, case)
    return 2 * e * bm * bd + 4 * bm * bd


def bwd_dots(config: Config, case: Case) -> tuple[Dot, ...]:
    """qk = q k^T and dp = do v^T (k, v fixed per key block), dv += p^T do and dk += ds^T q
    (accumulated), dq = ds k (read back and stored by the vector code)."""
    bm, bn, bd, e = _sizes(config, case)
    return (
        Dot(bm, bn, bd, e, fixed="b"),
        Dot(bm, bn, bd, e, fixed="b"),
        Dot(bn, bd, bm, e, vector="a", stored=True, vector_rows=(bn,)),
        Dot(bn, bd, bm, e, vector="a", stored=True, vector_rows=(bn,)),
        Dot(bm, bd, bn, e, fixed="b", vector="a", vector_rows=(bn,)),
    )


def _m_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-case.shape["max_seq_len"] // config["BLOCK_M"]), case.shape["B"] * case.shape["H"]


def _delta_blocks(config: Config, case: Case) -> tuple[int, int]:
    return -(-cached_queries(case) // config["BLOCK_M"]), case.shape["B"] * case.shape["H"]


def _key_blocks(config: Config, case: Case) -> tuple[int, int]:
    parallel = config.get("SEQUENCE_PARALLEL", False)
    blocks = -(-case.shape["max_seq_len"] // config["BLOCK_N"]) if parallel else 1
    return case.shape["B"] * case.shape["H"], blocks


def _seq_fits(name: str, rows: Callable[[Case], int] = lambda c: c.shape["max_seq_len"]):
    """A block over the rows it tiles padded (>= 16, tl.dot's least) only computes padding;
    upstream's default stays allowed."""
    return BlockFits(name, lambda c: max(16, next_pow2(rows(c)), default(c)[name]), "max_seq_len")


def default(case: Case) -> Config:
    """Upstream's first autotune config (`_get_fw_configs` and `_get_bw_configs`, the CUDA
    lists, share it); which one its autotuner keeps is a timing on the GPU, not a rule."""
    return {"BLOCK_M": 16, "BLOCK_N": 32, "num_warps": 2, "num_stages": 2}


def bwd_default(case: Case) -> Config:
    """`default`, in upstream's first backward config's form (not sequence-parallel)."""
    return {**default(case), "SEQUENCE_PARALLEL": False}


_SEQ_FITS = (_seq_fits("BLOCK_M"), _seq_fits("BLOCK_N"))
#: The cached forward's query blocks tile its DeltaSize new queries.
_DELTA_FITS = (_seq_fits("BLOCK_M", cached_queries), _seq_fits("BLOCK_N"))

FWD = KernelSpec(
    name="fwd",
    tunables=TUNABLES,
    outputs=("out",),
    default=default,
    grid=_m_blocks,
    tile_bytes=fwd_tiles,
    stream_bytes=fwd_stream,
    constraints=_SEQ_FITS,
    dots=fwd_dots,
    port_kernel="_fwd_kernel",
    upstream_kernel="_hstu_attn_fwd",
)
BWD = KernelSpec(
    name="bwd",
    tunables=BWD_TUNABLES,
    outputs=("dq", "dk", "dv"),
    default=bwd_default,
    grid=_key_blocks,
    tile_bytes=bwd_tiles,
    stream_bytes=bwd_stream,
    constraints=_SEQ_FITS,
    dots=bwd_dots,
    port_kernel="_bwd_kernel",
    upstream_kernel="_hstu_attn_bwd",
)
CACHED_FWD = KernelSpec(
    name="cached_fwd",
    tunables=TUNABLES,
    outputs=("cached_out",),
    default=default,
    grid=_delta_blocks,
    tile_bytes=fwd_tiles,
    stream_bytes=fwd_stream,
    constraints=_DELTA_FITS,
    dots=fwd_dots,
    port_kernel="_fwd_kernel",
    upstream_kernel="_hstu_attn_fwd",
)


class HstuAttention(OpSpec):
    name = NAME
    summary = (
        "HSTU jagged causal attention, SiLU scores scaled by alpha and 1/max_seq_len, with "
        "targets, contextual positions and a window; fwd, bwd (dq, dk, dv), cached fwd"
    )
    upstream = Upstream(
        file="examples/hstu/ops/triton_ops/triton_hstu_attention.py",
        sha256="107f9df512b1ded9a62d9e79a769282be075192a594ba641367a6ad13dc4fd7f",
        functions=(
            "triton_hstu_mha",
            "triton_hstu_attention_fwd",
            "triton_hstu_attention_bwd",
            "triton_cached_hstu_mha",
        ),
        lines="65-3106",
        source=RECSYS_EXAMPLES,
    )
    lengths_rule = "ops.jagged.skewed_lengths(B, max_seq_len, overflow=1.0): under max_seq_len"
    shape_keys = ("B", "H", "max_seq_len", "D", "targets", "contextual", "window")
    #: num_targets is empty where the case has none (upstream's None); the scalars are 0-d.
    input_names = (
        "q", "k", "v", "offsets", "num_targets", "max_seq_len", "alpha", "contextual", "window",
        "dout", "delta_q", "k_cache", "v_cache", "cache_offsets",
    )  # fmt: skip
    output_names = ("out", "dq", "dk", "dv", "cached_out")
    dtypes = ("float32", "float16", "bfloat16")
    kernels = (FWD, BWD, CACHED_FWD)
    parts = {"fwd": ("fwd",), "bwd": ("bwd",), "cached_fwd": ("cached_fwd",)}

    # -- cases ---------------------------------------------------------------------------------
    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        b, h, n, d, t, c, w = (shape[k] for k in self.shape_keys)
        name = f"b{b}_h{h}_n{n}_d{d}_t{t}_c{c}_w{w}_{SHORT_DTYPE[dtype]}"
        return Case(NAME, name, dict(shape), dtype, tuple(lengths), kind, offsets)

    def cases(self, kind: CaseKind) -> list[Case]:
        keys = self.shape_keys
        if kind == "accuracy":
            return [
                self.make_case(dict(zip(keys, values, strict=True)), dtype, lengths, kind)
                for *values, lengths in ACCURACY_SHAPES
                for dtype in self.dtypes
            ]
        out = []
        for *values, dtype in PERFORMANCE_SHAPES:
            shape = dict(zip(keys, values, strict=True))
            lengths = skewed_lengths(shape["B"], shape["max_seq_len"], overflow=1.0)
            out.append(self.make_case(shape, dtype, lengths, kind))
        return out

    def case_from_shape(self, shape: dict[str, int], dtype: str, offsets: list[int] | None) -> Case:
        """As OpSpec's, with targets 0 or 1, contextual and window >= 0, and lengths under
        max_seq_len where no offsets are given."""
        flags = {"targets": (0, 1), "contextual": None, "window": None}
        for key, allowed in flags.items():
            value = shape.get(key, 0)
            if (allowed and value not in allowed) or value < 0:
                raise ValueError(f"{key} must be {'0 or 1' if allowed else '>= 0'}, not {value}")
        given = super().case_from_shape(
            {**shape, **{k: 1 for k in flags if k in shape}}, dtype, offsets
        )
        lengths = given.lengths
        if offsets is None:
            lengths = skewed_lengths(shape["B"], shape["max_seq_len"], overflow=1.0)
        ordered = {k: shape[k] for k in self.shape_keys}
        return self.make_case(ordered, given.dtype, lengths, "accuracy", given.offsets)

    # -- data ----------------------------------------------------------------------------------
    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        h, d = case.shape["H"], case.shape["D"]
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        offsets = (
            torch.tensor(case.offsets, dtype=torch.int64)
            if case.offsets is not None
            else offsets_from_lengths(case.lengths, torch.device("cpu"))
        )
        lengths = offsets[1:] - offsets[:-1]
        rows = int(offsets[-1])
        delta = cached_queries(case)
        cache_lengths = lengths.clamp_min(0) + delta
        cache_rows = int(cache_lengths.sum())
        tensors = {
            "q": torch.randn(rows, h, d, generator=gen),
            "k": torch.randn(rows, h, d, generator=gen),
            "v": torch.randn(rows, h, d, generator=gen),
            "dout": torch.randn(rows, h, d, generator=gen),
            "delta_q": torch.randn(lengths.numel() * delta, h, d, generator=gen),
            "k_cache": torch.randn(cache_rows, h, d, generator=gen),
            "v_cache": torch.randn(cache_rows, h, d, generator=gen),
        }
        out = {name: x.to(case.torch_dtype).to(device) for name, x in tensors.items()}
        out["offsets"] = offsets.to(device)
        out["cache_offsets"] = offsets_from_lengths(tuple(cache_lengths.tolist()), device)
        if case.shape["targets"]:
            # Up to MAX_TARGETS, leaving a contextual block and one history position.
            room = (lengths - case.shape["contextual"] - 1).clamp(0, MAX_TARGETS)
            drawn = torch.randint(0, MAX_TARGETS + 1, (lengths.numel(),), generator=gen)
            out["num_targets"] = torch.minimum(drawn, room).to(device)
        else:
            out["num_targets"] = torch.zeros(0, dtype=torch.int64, device=device)
        out["max_seq_len"] = torch.tensor(case.shape["max_seq_len"])
        out["alpha"] = torch.tensor(1.0 / d**0.5, dtype=torch.float64)
        out["contextual"] = torch.tensor(case.shape["contextual"])
        out["window"] = torch.tensor(case.shape["window"])
        return out

    @staticmethod
    def _options(inputs: Tensors) -> tuple:
        """(N, alpha, num_targets, max_attn_len, contextual_seq_len) as upstream takes them."""
        return (
            int(inputs["max_seq_len"]),
            float(inputs["alpha"]),
            inputs["num_targets"] if inputs["num_targets"].numel() else None,
            int(inputs["window"]),
            int(inputs["contextual"]),
        )

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        """Per sequence, in `compute_dtype`, the dense masked form; gradients by autograd."""
        n, alpha, num_targets, window, contextual = self._options(inputs)
        q, k, v = (inputs[x].to(compute_dtype).detach().requires_grad_() for x in "qkv")
        out = attention(q, k, v, inputs["offsets"], num_targets, alpha, n, contextual, window)
        out.backward(inputs["dout"].to(compute_dtype))
        cached = cached_attention(
            inputs["delta_q"].to(compute_dtype),
            inputs["k_cache"].to(compute_dtype),
            inputs["v_cache"].to(compute_dtype),
            inputs["cache_offsets"],
            num_targets,
            alpha,
            n,
            contextual,
            window,
        )
        return {"out": out.detach(), "dq": q.grad, "dk": k.grad, "dv": v.grad, "cached_out": cached}

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """E = sum_b L_b^2 / 2 (query, key) pairs under the causal mask, R rows, D = DimV.
        fwd: q, k, v read, out written; 2 dots over E pairs. bwd: q, k, v, dout read, dq, dk, dv
        written; 5 dots over E. cached_fwd: delta_q, the cache's k and v read, out written;
        2 dots over B * DeltaSize * cache length."""
        h, d, size = case.shape["H"], case.shape["D"], case.torch_dtype.itemsize
        lengths = effective_lengths(case)
        pairs = sum(x * (x + 1) // 2 for x in lengths)
        rows = total_rows(case)
        if part == "fwd":
            return 4 * rows * h * d * size, 2 * 2 * pairs * h * d
        if part == "bwd":
            return 7 * rows * h * d * size, 5 * 2 * pairs * h * d
        delta = cached_queries(case)
        cache = rows + delta * len(lengths)
        return (2 * cache + 2 * delta * len(lengths)) * h * d * size, 2 * 2 * delta * cache * h * d

    # -- the port ------------------------------------------------------------------------------
    def launch(self, kernel: str, inputs: Tensors, config: Config | None) -> Tensors:
        port = load_port(NAME)
        n, alpha, num_targets, window, contextual = self._options(inputs)
        if kernel == "fwd":
            out = port.triton_hstu_attention_fwd(
                n, alpha, inputs["q"], inputs["k"], inputs["v"], inputs["offsets"], num_targets,
                window, contextual, None, False, config=config,
            )  # fmt: skip
            return {"out": out}
        if kernel == "bwd":
            q, k, v = inputs["q"], inputs["k"], inputs["v"]
            dq, dk, dv = port.triton_hstu_attention_bwd(
                inputs["dout"], q, k, v, torch.empty_like(q), torch.empty_like(k),
                torch.empty_like(v), inputs["offsets"], num_targets, n, alpha, window,
                contextual, None, False, config=config,
            )  # fmt: skip
            return {"dq": dq, "dk": dk, "dv": dv}
        if kernel == "cached_fwd":
            out = port.triton_cached_hstu_mha(
                n, alpha, inputs["delta_q"], inputs["k_cache"], inputs["v_cache"],
                inputs["cache_offsets"], num_targets, window, contextual, config=config,
            )  # fmt: skip
            return {"cached_out": out}
        raise ValueError(f"unknown kernel {kernel!r}; valid: fwd, bwd, cached_fwd")

    def run_port(self, inputs: Tensors, configs: dict[str, Config] | None = None) -> Tensors:
        configs = configs or {}
        out: Tensors = {}
        for kernel in ("fwd", "bwd", "cached_fwd"):
            out.update(self.launch(kernel, inputs, configs.get(kernel)))
        return out

    def port_part(
        self, part: str, inputs: Tensors, configs: dict[str, Config] | None
    ) -> Callable[[], object]:
        config = (configs or {}).get(part)
        return lambda: self.launch(part, inputs, config)

    # -- upstream ------------------------------------------------------------------------------
    def upstream_outputs(self, case: Case) -> tuple[str, ...]:
        """Upstream runs on CUDA only (libdevice's fast_dividef and fast_expf, Triton's GPU
        autotuner), and only where the head dim is a power of two (its blocks are the head
        dim); `run_upstream` returns nothing off CUDA."""
        d = case.shape["D"]
        if self.upstream.missing() or d & (d - 1) or d < 16:
            return ()
        return self.output_names

    def _runs_upstream(self, inputs: Tensors, case: Case) -> bool:
        return bool(self.upstream_outputs(case)) and inputs["q"].is_cuda

    def _upstream_call(
        self, part: str, inputs: Tensors, enable_tma: bool = False
    ) -> Callable[[], object]:
        up = self.upstream.load()
        n, alpha, num_targets, window, contextual = self._options(inputs)
        q, k, v, offsets = inputs["q"], inputs["k"], inputs["v"], inputs["offsets"]
        if part == "fwd":
            return lambda: up.triton_hstu_attention_fwd(
                n, alpha, q, k, v, offsets, num_targets, window, contextual, None, enable_tma
            )
        if part == "bwd":
            dout = inputs["dout"]
            grads = torch.empty_like(q), torch.empty_like(k), torch.empty_like(v)
            # scaling_seqlen given: upstream's backward takes its -1 default literally.
            return lambda: up.triton_hstu_attention_bwd(
                dout, q, k, v, *grads, offsets, num_targets, n, alpha, window, contextual, None,
                enable_tma, n,
            )  # fmt: skip
        delta_q, k_cache, v_cache = inputs["delta_q"], inputs["k_cache"], inputs["v_cache"]
        cache_offsets = inputs["cache_offsets"]
        return lambda: up.triton_cached_hstu_mha(
            n, alpha, delta_q, k_cache, v_cache, cache_offsets, num_targets, window, contextual,
            enable_tma,
        )  # fmt: skip

    def run_upstream(self, inputs: Tensors, case: Case) -> Tensors:
        if not self._runs_upstream(inputs, case):
            return {}
        out = self._upstream_call("fwd", inputs)()
        dq, dk, dv = self._upstream_call("bwd", inputs)()
        cached = self._upstream_call("cached_fwd", inputs)()
        return {"out": out, "dq": dq, "dk": dk, "dv": dv, "cached_out": cached}

    def upstream_part(self, part: str, inputs: Tensors, case: Case) -> Callable[[], object] | None:
        if not self._runs_upstream(inputs, case):
            return None
        return self._upstream_call(part, inputs)

    def upstream_tma_part(
        self, part: str, inputs: Tensors, case: Case
    ) -> Callable[[], object] | None:
        """Upstream with `enable_tma=True` (host tensor descriptors in the forwards, device ones
        in the backward), where the device runs TMA. Unverified on hardware: no sm_90 GPU ran
        it when this was written."""
        if self.upstream_tma_missing(inputs["q"].device) or not self._runs_upstream(inputs, case):
            return None
        return self._upstream_call(part, inputs, enable_tma=True)

    def upstream_tma_missing(self, device: torch.device) -> str | None:
        return tma_missing(device)


def _per_sequence(offsets: torch.Tensor) -> list[tuple[int, int]]:
    bounds = offsets.cpu().tolist()
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    offsets: torch.Tensor,
    num_targets: torch.Tensor | None,
    alpha: float,
    scaling_seqlen: int,
    contextual: int,
    window: int,
) -> torch.Tensor:
    """out [L, H, DimV] of the jagged q, k [L, H, D], v [L, H, DimV], one sequence at a time."""
    targets = num_targets.cpu().tolist() if num_targets is not None else None
    pieces = []
    for b, (start, end) in enumerate(_per_sequence(offsets)):
        length = end - start
        mask = valid_mask(length, targets[b] if targets else -1, contextual, window, q.device)
        pieces.append(
            _sequence(q[start:end], k[start:end], v[start:end], mask, alpha, scaling_seqlen)
        )
    return torch.cat(pieces) if pieces else v.new_zeros((0, *v.shape[1:]))


def cached_attention(
    delta_q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    offsets: torch.Tensor,
    num_targets: torch.Tensor | None,
    alpha: float,
    scaling_seqlen: int,
    contextual: int,
    window: int,
) -> torch.Tensor:
    """The rows of `attention` for the last DeltaSize positions of each cached sequence, with
    delta_q [B * DeltaSize, H, D] as their queries."""
    spans = _per_sequence(offsets)
    if not spans:
        return delta_q.new_zeros((0, delta_q.size(1), v.size(2)))
    delta = delta_q.size(0) // len(spans)
    targets = num_targets.cpu().tolist() if num_targets is not None else None
    pieces = []
    for b, (start, end) in enumerate(spans):
        length = end - start
        mask = valid_mask(length, targets[b] if targets else -1, contextual, window, k.device)
        queries = delta_q[b * delta : (b + 1) * delta]
        pieces.append(
            _sequence(queries, k[start:end], v[start:end], mask[-delta:], alpha, scaling_seqlen)
        )
    return torch.cat(pieces)


def _sequence(q, k, v, mask, alpha, scaling_seqlen) -> torch.Tensor:
    """One sequence: q [M, H, D] against k [L, H, D], v [L, H, DimV], mask [M, L]."""
    scores = torch.einsum("mhd,nhd->hmn", q, k) * alpha
    weights = torch.nn.functional.silu(scores) / scaling_seqlen * mask
    return torch.einsum("hmn,nhd->mhd", weights, v)


SPEC = HstuAttention()
