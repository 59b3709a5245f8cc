"""A/B on a GPU of the two recsys parts still over upstream in the last baselines (2026-12-03,
db81b64): group_norm_mul_dropout's fp32 backward (1.023) and jagged_dense_broadcast_add's fp32
forward (1.008). Both stream memory (5.4 GB and 357 MB) near the copy ceiling; can the port's
kernels stream closer to it, and where do upstream's fast baseline rounds come from?

- `parts`: the two whole parts as `autotune baseline` calls them (upstream's autograd entry at
  its defaults, the port's launcher at its frozen configs), interleaved round by round, the
  order swapped every round, with the device's clocks, temperatures and throttle reasons read
  after each round (`nvidia-smi`): do upstream's modes follow the device's state?
- `dx`: the port's group-norm bwd_dx kernel with switches (`_dx_variant`), at its frozen
  config and at upstream's launch (a program a row), against upstream's raw dx kernel.
  (At 05e5f29 and 37dd417 the switches were also `EVICT`, evict-first loads and streaming
  stores, and `CHUNKED`, contiguous runs of rows a program: both lost, see docs/benchmarks.md.)
- `regs`: the port's bwd_dx with a warp a row over blocks of 2 and 4 rows, at ptxas's registers
  and capped (`maxnreg`), so that more than 32 warps fit an SM.
- `rows`: the broadcast add's forward as programs over the jagged rows (row blocks of the
  [sum_L, D] values, each row's sequence found by a binary search over the offsets) instead of
  upstream's grid over (sequence, max_seq_len's row blocks), two thirds of whose blocks are
  empty on this case; at several configs, against the port's frozen kernel and upstream's
  autotuned one. The port has the row-block form since 59fee74 (`GRID` "rows"); at 05e5f29 and
  37dd417, where c1 and c2 ran, it was this script's own kernel, with an `EVICT` switch
  (evict-first loads, streaming stores), which lost.

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/stream_variants_ab.py \\
        --soc H200 --only parts dx rows
"""

from __future__ import annotations

import argparse
import statistics
import subprocess

import group_norm_bwd_ab
import torch
import triton
import triton.language as tl
from interleaved_ab import Call, ab_line
from recsys_kernel_calls import BroadcastAddFwd, GroupNormDx

from autotuner.backends import get_backend
from autotuner.search.settle import frozen_config
from ops import get_op
from ops.norm import MAX_NUM_PROGRAMS

GN_CASE, BA_CASE = "n1048576_h2_d128_fp32", "b256_n4096_d128_fp32"
TELEMETRY = (
    "clocks.sm,clocks.mem,temperature.gpu,temperature.memory,power.draw,clocks_event_reasons.active"
)


def telemetry() -> str:
    out = subprocess.run(
        ["nvidia-smi", f"--query-gpu={TELEMETRY}", "--format=csv,noheader"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    return out.stdout.strip() or out.stderr.strip()


def case_of(op: str, name: str):
    return next(c for c in get_op(op).cases("performance") if c.name == name)


def parts(backend, rounds: int, reps: int) -> None:
    """Upstream's and the port's whole part per round, as the baseline times them."""
    for op, case_name, part in (
        ("group_norm_mul_dropout", GN_CASE, "bwd"),
        ("jagged_dense_broadcast_add", BA_CASE, "fwd"),
    ):
        spec, case = get_op(op), case_of(op, case_name)
        inputs = spec.make_inputs(case, backend.device)
        calls = {
            "upstream": spec.upstream_part(part, inputs, case),
            "port": spec.port_part(part, inputs, None),
        }
        for call in calls.values():
            call()
        backend.synchronize()
        samples = {name: [] for name in calls}
        print(f"# {op} {case_name} {part}: round, first, upstream median, port median, "
              f"port/upstream, {TELEMETRY}")  # fmt: skip
        for r in range(rounds):
            order = list(calls) if r % 2 == 0 else list(reversed(calls))
            medians = {}
            for name in order:
                times = backend.samples(calls[name], reps)
                samples[name] += times
                medians[name] = statistics.median(times)
            print(
                f"{r:3d} {order[0]:8s} {medians['upstream']:.4f} {medians['port']:.4f} "
                f"{medians['port'] / medians['upstream']:.3f}  {telemetry()}",
                flush=True,
            )
        up, port = (statistics.median(samples[k]) for k in ("upstream", "port"))
        print(f"{op} {case_name} {part}: upstream {up:.4f} port {port:.4f} ratio {port / up:.3f}"
              f" (n={len(samples['port'])} each)")  # fmt: skip
        del inputs, calls
        torch.cuda.empty_cache()


@triton.jit
def _dx_variant(
    DX, DU, DY, X, U, W, B, Mean, Rstd, DW_PARTIAL, DB_PARTIAL, N, H, D,
    stride_dx, stride_du, stride_dy, stride_x, stride_u,
    BLOCK_N: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_D: tl.constexpr,
    PREFETCH: tl.constexpr, LATE_U: tl.constexpr, PARTIALS: tl.constexpr, LOCKS: tl.constexpr,
    TRAINING: tl.constexpr = False, seed=0, dropout_ratio=0.0,
):  # fmt: skip
    """The port's bwd_dx, with the switches (`TRAINING`: the dropout numbers drawn as the port
    draws them, what the op's cases run; before 2026-12-03's c5 the variants left them out):
    `PREFETCH` loads the next row block before computing this one; `LATE_U` loads u after du
    is stored (upstream's order); `PARTIALS` what becomes of a program's weight sums: "store"
    (the port: one partial row a program), "atomic" (upstream: added to lock row pid % LOCKS),
    "none" (left out, a diagnostic)."""
    pid = tl.program_id(0)
    slots = tl.arange(0, BLOCK_N * BLOCK_H)
    heads = slots % BLOCK_H
    cols = tl.arange(0, BLOCK_D)
    head_mask = heads < H
    col_mask = cols < D
    w = tl.load(W + heads, mask=head_mask, other=0.0).to(tl.float32)
    b = tl.load(B + heads, mask=head_mask, other=0.0).to(tl.float32)
    within = heads[:, None] * D + cols[None, :]
    dw = tl.zeros([BLOCK_N * BLOCK_H], dtype=tl.float32)
    db = tl.zeros([BLOCK_N * BLOCK_H], dtype=tl.float32)
    step = tl.num_programs(0) * BLOCK_N
    rows = pid * BLOCK_N + slots // BLOCK_H
    mask = ((rows < N) & head_mask)[:, None] & col_mask[None, :]
    rows64 = rows.to(tl.int64)
    x = tl.load(X + rows64[:, None] * stride_x + within, mask=mask, other=0.0)
    dy = tl.load(DY + rows64[:, None] * stride_dy + within, mask=mask, other=0.0)
    u = tl.load(U + rows64[:, None] * stride_u + within, mask=mask, other=0.0)
    for start in range(pid * BLOCK_N, N, step):
        rows = start + slots // BLOCK_H
        head_rows = rows * H + heads
        row_mask = (rows < N) & head_mask
        mask = row_mask[:, None] & col_mask[None, :]
        rows64 = rows.to(tl.int64)
        if not PREFETCH:
            x = tl.load(X + rows64[:, None] * stride_x + within, mask=mask, other=0.0)
            dy = tl.load(DY + rows64[:, None] * stride_dy + within, mask=mask, other=0.0)
            if not LATE_U:
                u = tl.load(U + rows64[:, None] * stride_u + within, mask=mask, other=0.0)
        mean = tl.load(Mean + head_rows, mask=row_mask, other=0.0)
        rstd = tl.load(Rstd + head_rows, mask=row_mask, other=0.0)
        xf, dyf, uf = x.to(tl.float32), dy.to(tl.float32), u.to(tl.float32)
        if TRAINING:
            random = tl.rand(seed, head_rows[:, None] * D + cols[None, :])
            keep = (random > dropout_ratio) | (dropout_ratio == 0.0)
            dyf = tl.where(keep, dyf / (1.0 - dropout_ratio), 0.0)
        if PREFETCH:
            n64 = (rows + step).to(tl.int64)
            nmask = ((rows + step < N) & head_mask)[:, None] & col_mask[None, :]
            x = tl.load(X + n64[:, None] * stride_x + within, mask=nmask, other=0.0)
            dy = tl.load(DY + n64[:, None] * stride_dy + within, mask=nmask, other=0.0)
            if not LATE_U:
                u = tl.load(U + n64[:, None] * stride_u + within, mask=nmask, other=0.0)
        xhat = tl.where(mask, (xf - mean[:, None]) * rstd[:, None], 0.0)
        du = dyf * (xhat * w[:, None] + b[:, None])
        tl.store(DU + rows64[:, None] * stride_du + within, du.to(DU.dtype.element_ty), mask=mask)
        if LATE_U:
            uf = tl.load(U + rows64[:, None] * stride_u + within, mask=mask, other=0.0)
            uf = uf.to(tl.float32)
        dyf = dyf * uf
        dw_row = tl.sum(dyf * xhat, axis=1)
        db_row = tl.sum(dyf, axis=1)
        c1 = w * dw_row / D
        c2 = w * db_row / D
        dx = (w[:, None] * dyf - (xhat * c1[:, None] + c2[:, None])) * rstd[:, None]
        tl.store(DX + rows64[:, None] * stride_dx + within, dx.to(DX.dtype.element_ty), mask=mask)
        if PARTIALS != "none":
            dw += dw_row
            db += db_row
    if PARTIALS == "atomic":
        one_row = tl.arange(0, BLOCK_H)
        lock = (pid % LOCKS).to(tl.int64) * H + one_row
        tl.atomic_add(DW_PARTIAL + lock, tl.sum(tl.reshape(dw, (BLOCK_N, BLOCK_H)), axis=0),
                      mask=one_row < H, sem="relaxed")  # fmt: skip
        tl.atomic_add(DB_PARTIAL + lock, tl.sum(tl.reshape(db, (BLOCK_N, BLOCK_H)), axis=0),
                      mask=one_row < H, sem="relaxed")  # fmt: skip
    if PARTIALS == "store":
        one_row = tl.arange(0, BLOCK_H)
        partial = pid.to(tl.int64) * H + one_row
        tl.store(DW_PARTIAL + partial, tl.sum(tl.reshape(dw, (BLOCK_N, BLOCK_H)), axis=0),
                 mask=one_row < H)  # fmt: skip
        tl.store(DB_PARTIAL + partial, tl.sum(tl.reshape(db, (BLOCK_N, BLOCK_H)), axis=0),
                 mask=one_row < H)  # fmt: skip


def frozen_dx(g: GroupNormDx, soc: str) -> tuple[dict[str, Call], int, int, int]:
    """The port's bwd_dx at its frozen config and upstream's dx; the frozen BLOCK_N, num_warps
    and the looping launch's program count the variants vary: the frozen count, or the most a
    launch has where the frozen config takes a program per row block (NUM_PROGRAMS 0)."""
    frozen = frozen_config(g.op, soc, "bwd_dx", GN_CASE)
    block_n, warps = frozen["BLOCK_N"], frozen["num_warps"]
    fns = {"port": g.port_dx(block_n, warps, frozen["NUM_PROGRAMS"]), "upstream_dx": g.upstream()}
    return fns, block_n, warps, frozen["NUM_PROGRAMS"] or MAX_NUM_PROGRAMS


def dx_calls(backend, soc: str) -> tuple[dict[str, Call], GroupNormDx]:
    case = case_of(GroupNormDx.op, GN_CASE)
    g = GroupNormDx(case, backend.device)
    fns, block_n, warps, programs = frozen_dx(g, soc)
    fns["port_row_blocks_atomic"] = g.port_dx(1, g.warps, 0)

    def variant(count: int, num_warps: int = warps, rows: int = block_n, **switches) -> Call:
        dx, du = torch.empty_like(g.x), torch.empty_like(g.u)
        flags = {"PREFETCH": False, "LATE_U": False, "PARTIALS": "store", "LOCKS": 2048, **switches}
        slots = min(count, flags["LOCKS"]) if flags["PARTIALS"] == "atomic" else count
        partials = [torch.zeros(slots, g.h, device=g.device) for _ in "wb"]
        kernel = _dx_variant[(count,)]
        return (
            lambda: kernel(
                dx, du, g.dy, g.x, g.u, g.w, g.b, g.mean, g.rstd, *partials, g.n, g.h, g.d,
                dx.stride(0), du.stride(0), g.dy.stride(0), g.x.stride(0), g.u.stride(0),
                BLOCK_N=rows, BLOCK_H=g.bh, BLOCK_D=g.bd, num_warps=num_warps, **flags,
            ),
            (dx, du),
        )  # fmt: skip

    # whole waves: NUM_PROGRAMS a multiple of the programs the SMs hold at once (sm_90: 32
    # blocks and 64 warps an SM), where 32768 leaves the last of 7.76 waves a quarter empty
    sms = torch.cuda.get_device_properties(g.device).multi_processor_count
    resident = sms * min(32, 64 // warps)
    for waves in (4, 8, 16):
        fns[f"port_{waves}_waves_{resident * waves}"] = g.port_dx(block_n, warps, resident * waves)
    every_row = triton.cdiv(g.n, block_n)
    drawn = {"TRAINING": g.training, "seed": g.seed, "dropout_ratio": g.ratio}
    for count in (programs, every_row):
        fns[f"late_u_rows_{count}"] = variant(count, LATE_U=True, **drawn)
        fns[f"late_u_atomic_{count}"] = variant(count, LATE_U=True, PARTIALS="atomic", **drawn)
        fns[f"late_u_atomic_{count}_undrawn"] = variant(count, LATE_U=True, PARTIALS="atomic")
    for rows, num_warps in ((2, 1), (4, 2)):
        count = triton.cdiv(g.n, rows)
        name = f"late_u_atomic_rows{rows}_w{num_warps}_{count}"
        fns[name] = variant(count, num_warps, rows, LATE_U=True, PARTIALS="atomic", **drawn)
    fns[f"late_u_atomic_w2_{every_row}"] = variant(
        every_row, 2, LATE_U=True, PARTIALS="atomic", **drawn
    )
    return fns, g


def regs_calls(backend, soc: str) -> dict[str, Call]:
    """The port's bwd_dx at the frozen config, and with a warp a row over blocks of 2 and 4 rows
    at the same rows a program, at the registers ptxas chose and capped (`maxnreg`) so that
    more warps fit an SM (64 registers a thread: 32 warps of 64), against upstream's dx."""
    case = case_of(GroupNormDx.op, GN_CASE)
    g = GroupNormDx(case, backend.device)
    fns, block_n, warps, programs = frozen_dx(g, soc)
    for rows in (2, 4):
        count = programs * block_n // rows
        for cap in (None, 48, 40):
            options = {"maxnreg": cap} if cap else {}
            fns[f"rows{rows}_w{rows}_{count}_regs{cap or 'auto'}"] = g.port_dx(
                rows, rows, count, **options
            )
    return fns


def rows_calls(backend, soc: str) -> dict[str, Call]:
    """The port's forward at its frozen config, at upstream's pick, and over row blocks (GRID
    "rows") at several tiles; upstream's kernel at its pick."""
    case = case_of(BroadcastAddFwd.op, BA_CASE)
    a = BroadcastAddFwd(case, backend.device)
    kernel = a.port._jagged_dense_add_kernel
    frozen = frozen_config(a.op, soc, "fwd", case.name)
    fns = {"port": a.launch(kernel, frozen), "upstream": a.upstream()}
    fns["port_at_upstream_pick"] = a.launch(kernel, {**a.picked, "GRID": "sequences"})
    for block_n, block_d, warps in ((16, 64, 2), (16, 64, 4), (8, 64, 1), (8, 64, 2), (32, 64, 2),
                                     (16, 32, 1), (8, 128, 2), (16, 128, 2)):  # fmt: skip
        config = {"BLOCK_N": block_n, "BLOCK_D": block_d, "num_warps": warps, "num_stages": 1}
        fns[f"rows_{block_n}x{block_d}_w{warps}"] = a.launch(kernel, {**config, "GRID": "rows"})
    return fns


def print_registers(fns: dict[str, Call]) -> None:
    for name, (fn, _) in fns.items():
        compiled = fn()
        print(f"# {name}: {compiled.n_regs} registers, {compiled.n_spills} spills a thread")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument("--only", nargs="+", choices=("parts", "dx", "regs", "sums", "rows"),
                        default=["parts", "dx", "regs", "sums", "rows"])  # fmt: skip
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("stream_variants_ab.py times kernels: it needs a GPU soc")
    print(f"# {backend.describe()}, versions {backend.versions()}")
    if "parts" in args.only:
        parts(backend, args.rounds, args.reps)
    if "dx" in args.only:
        fns, g = dx_calls(backend, args.soc)
        print_registers(fns)
        line = ab_line(backend, fns, args.rounds, args.reps)
        print(f"group_norm_mul_dropout {GN_CASE} bwd_dx: {line}", flush=True)
        del fns
    if "regs" in args.only:
        fns = regs_calls(backend, args.soc)
        print_registers(fns)
        line = ab_line(backend, fns, args.rounds, args.reps)
        print(f"group_norm_mul_dropout {GN_CASE} bwd_dx registers: {line}", flush=True)
        del fns
    if "sums" in args.only:
        g = GroupNormDx(case_of(GroupNormDx.op, GN_CASE), backend.device)
        counts = [g.n // rows for rows in (1, 2, 4, 8, 32)]
        sums = group_norm_bwd_ab.sums(g, case_of(g.op, GN_CASE), args.soc, counts)
        line = ab_line(backend, sums, args.rounds, args.reps, reference="upstream_dw")
        print(f"group_norm_mul_dropout {GN_CASE} sums: {line}", flush=True)
        del g, sums
        torch.cuda.empty_cache()
    if "rows" in args.only:
        fns = rows_calls(backend, args.soc)
        line = ab_line(backend, fns, args.rounds, 2 * args.reps)
        print(f"jagged_dense_broadcast_add {BA_CASE} fwd: {line}", flush=True)


if __name__ == "__main__":
    main()
