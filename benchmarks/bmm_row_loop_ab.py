"""A/B of jagged_dense_bmm_broadcast_add's forward on a GPU: the port's kernel against upstream's
raw kernel (its `triton.autotune` bypassed), the port's kernel without the rows past
max_seq_len (`no_loop`), and the port's other loop form, at the port's frozen config of each
performance case, interleaved; with `--configs upstream`, at each config of upstream's own
autotune list instead (the port's frozen config first), after printing the config upstream's
autotuner picks for the case.

The port computes every row of a sequence, also past max_seq_len (upstream leaves those rows
unwritten): the tile's own row block as upstream does, then the later row blocks in small
unpipelined pieces (`_bmm_add_later_rows`; before ccec3c1, a loop over the row blocks around the
pipelined K loop, which held some 50 registers more through it). `no_loop` (upstream's structure: the first row block only; equal to the port's
output on the performance cases, whose sequences all fit) shows what computing the later rows
costs when there are none. The port's tile runs its rows and K blocks as one loop (`FLAT`) on a
CUDA GPU in IEEE fp32, else as a K loop per row block (see the port's `_flat`): the variant
`flat` or `nested` forces the form the port does not take. Their registers:
`benchmarks/bmm_registers.py`.

Each variant's output is compared bit for bit with the port's; the times are the project's timer
(`Backend.samples`: L2 flushed and the launch covered before each call), `--rounds` rounds of
`--reps` calls of each in turn, and a variant wins or loses against the port by the search's A/B
rule (at least 1% with a one-sided Mann-Whitney p < 0.01).

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/bmm_row_loop_ab.py --soc H200
    ... bmm_row_loop_ab.py --soc H200 --case b256_n4096_d128_t256_fp32 --configs upstream
"""

from __future__ import annotations

import argparse

import torch
import triton
import triton.language as tl
from interleaved_ab import Call, ab_line

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from autotuner.search.warm_starts import from_upstream
from ops import get_op
from ops.ports import load_port

OP = "jagged_dense_bmm_broadcast_add"
PORT = load_port(OP)
_bmm_add_rows = PORT._bmm_add_rows  # the port's own row-block helper, called by the variants


@triton.jit
def _no_loop_kernel(
    offsets_ptr, a_ptr, b_ptr, bias_ptr, c_ptr, N, K,
    stride_am, stride_ak, stride_bb, stride_bk, stride_bn, stride_biasb, stride_cm, stride_cn,
    PRECISION: tl.constexpr, HAS_BIAS: tl.constexpr,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """`no_loop`: the tile's first row block only, rows past max_seq_len not computed."""
    seq = tl.program_id(2)
    start_m = tl.program_id(1) * BLOCK_M
    begin = tl.load(offsets_ptr + seq).to(tl.int64)
    seqlen = (tl.load(offsets_ptr + seq + 1) - begin).to(tl.int32)
    if start_m < seqlen:
        _bmm_add_rows(
            start_m, tl.program_id(0) * BLOCK_N, seqlen, N, K, a_ptr + begin * stride_am,
            b_ptr + seq.to(tl.int64) * stride_bb, bias_ptr + seq.to(tl.int64) * stride_biasb,
            c_ptr + begin * stride_cm, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
            stride_cn, PRECISION, HAS_BIAS, BLOCK_M, BLOCK_N, BLOCK_K,
        )  # fmt: skip


def calls(inputs: dict, config: dict, up, names: tuple[str, ...]) -> dict[str, Call]:
    """name -> (a call of the forward at `config`, the tensor it writes), for `names`."""
    x, y, bias, offsets = (inputs[k] for k in ("x", "y", "bias", "offsets"))
    msl = int(inputs["max_seq_len"])
    batch, k, n = y.shape
    blocks = {key: v for key, v in config.items() if key.startswith("BLOCK_")}
    options = {"num_warps": config["num_warps"], "num_stages": config["num_stages"]}
    grid = (triton.cdiv(n, blocks["BLOCK_N"]), triton.cdiv(msl, blocks["BLOCK_M"]), batch)
    strides = (x.stride(0), x.stride(1), y.stride(0), y.stride(1), y.stride(2), bias.stride(0))
    out = {name: torch.zeros(x.size(0), n, dtype=x.dtype, device=x.device) for name in names}
    variants = {
        "upstream": lambda c: up.jagged_dense_bmm_broadcast_add_kernel.fn[grid](
            offsets, x, y, bias, c, msl, n, k, x.stride(0), y.stride(0), y.stride(1), y.stride(2),
            bias.stride(0), c.stride(0), HAS_BIAS=True, ALLOW_TF32=False, **blocks, **options,
        ),
        **{
            name: lambda c, flat=flat: PORT._jagged_dense_bmm_add_kernel[grid](
                offsets, x, y, bias, c, msl, batch, n, k, 1, *strides, c.stride(0), c.stride(1),
                PRECISION="ieee", HAS_BIAS=True, PERSISTENT=False, FLAT=flat, **blocks, **options,
            )
            for name, flat in (("port", port_flat(x)), ("flat", True), ("nested", False))
        },
        "no_loop": lambda c: _no_loop_kernel[grid](
            offsets, x, y, bias, c, n, k, *strides, c.stride(0), c.stride(1),
            PRECISION="ieee", HAS_BIAS=True, **blocks, **options,
        ),
    }  # fmt: skip
    return {name: (lambda f=variants[name], c=out[name]: f(c), (out[name],)) for name in names}


def port_flat(x: torch.Tensor) -> bool:
    """The launcher's choice of the loop form for inputs `x` with TF32 off, as the variants
    launch them."""
    return PORT._flat(PORT._precision(False, x.device), x.dtype, x.device)


def upstream_pick(inputs: dict, up) -> dict:
    """The config upstream's `triton.autotune` picks for the case (its own timing, its key)."""
    x, y, bias, offsets = (inputs[k] for k in ("x", "y", "bias", "offsets"))
    msl = int(inputs["max_seq_len"])
    batch, k, n = y.shape
    out = torch.empty(x.size(0), n, dtype=x.dtype, device=x.device)
    kernel = up.jagged_dense_bmm_broadcast_add_kernel
    kernel[lambda meta: (triton.cdiv(n, meta["BLOCK_N"]), triton.cdiv(msl, meta["BLOCK_M"]), batch)](
        offsets, x, y, bias, out, up.autotune_max_seq_len(msl), n, k, x.stride(0), y.stride(0),
        y.stride(1), y.stride(2), bias.stride(0), out.stride(0), HAS_BIAS=True, ALLOW_TF32=False,
    )  # fmt: skip
    best = kernel.best_config
    return {**best.kwargs, "num_warps": best.num_warps, "num_stages": best.num_stages}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--case", action="append", help="a performance case (default: all)")
    parser.add_argument("--configs", choices=("frozen", "upstream"), default="frozen")
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit(
            "bmm_row_loop_ab.py times kernels: it needs a GPU soc, not the interpreter"
        )
    spec = get_op(OP)
    up = spec.upstream.load()
    print(f"# {backend.describe()}, versions {backend.versions()}")
    variants = ("upstream", "port", "no_loop")
    for case in spec.cases("performance"):
        if args.case and case.name not in args.case:
            continue
        frozen = frozen_config(OP, args.soc, "fwd", case.name) or spec.kernel("fwd").default(case)
        inputs = spec.make_inputs(case, backend.device)
        other = "nested" if port_flat(inputs["x"]) else "flat"  # the form the port does not take
        names = (*variants, other) if args.configs == "frozen" else ("upstream", "port", other)
        configs = [frozen]
        if args.configs == "upstream":
            print(f"{case.name}: upstream's autotune picks {upstream_pick(inputs, up)}", flush=True)
            configs += [c for c in from_upstream(spec, spec.kernel("fwd")) if c != frozen]
        for config in configs:
            line = ab_line(backend, calls(inputs, config, up, names), args.rounds, args.reps)
            print(f"{case.name} {config}: {line}", flush=True)


if __name__ == "__main__":
    main()
