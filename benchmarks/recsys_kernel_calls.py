"""The kernels the recsys A/B scripts time (`program_cap_ab.py`, `group_norm_bwd_ab.py`,
`broadcast_add_fwd_ab.py`), as `interleaved_ab.Call`s on one performance case: raw launches
into buffers of their own, no allocation or fill in the timed call.

- `GroupNormDx`: group_norm_mul_dropout's bwd_dx inputs (the port's forward statistics) and its
  two dx kernels: upstream's `_group_norm_mul_dropout_bwd_dx_du` at its launch (one row a
  program, its lock rows zeroed once, outside the timed calls) and the port's row kernel.
- `BroadcastAddFwd`: jagged_dense_broadcast_add's forward inputs, upstream's
  `jagged_dense_broadcast_add_kernel` at the config its `triton.autotune` picks in this process
  (printed), and a launch of a kernel with the port's signature (upstream's grid or, for a
  config of GRID "rows", row blocks of the jagged rows), capped as the port launches.
"""

from __future__ import annotations

import torch
import triton
from interleaved_ab import Call

from ops import get_op
from ops.jagged_dense_broadcast_add import by_rows
from ops.ports import load_port
from ops.spec import Case, Config

#: The most programs the ports launch (an Ascend launch takes at most 65535 blocks).
CAP = 32768


class GroupNormDx:
    op = "group_norm_mul_dropout"

    def __init__(self, case: Case, device: torch.device) -> None:
        spec = get_op(self.op)
        self.port, self.up = load_port(self.op), spec.upstream.load()
        given = spec.make_inputs(case, device)
        self.x, self.u, self.w, self.b, self.dy = (
            given[k] for k in ("x", "u", "weight", "bias", "dy")
        )
        self.n, self.h, self.d = case.shape["N"], case.shape["H"], case.shape["D"]
        self.ratio, self.training, self.seed = spec.dropout_ratio, spec.training, spec.seed
        _, self.mean, self.rstd = self.port.group_norm_mul_dropout_fwd(
            self.x,
            self.u,
            self.w,
            self.b,
            spec.eps,
            self.ratio,
            self.training,
            num_heads=self.h,
            linear_dim=self.d,
            seed=self.seed,
        )
        self.bh, self.bd = triton.next_power_of_2(self.h), triton.next_power_of_2(self.d)
        self.warps = min(max(self.bh * self.bd // 256, 1), 8)  # upstream's
        self.locks = self.port._lock_rows(self.n, self.h, self.d)  # upstream's GROUP_N
        self.eps, self.device = spec.eps, device

    def upstream(self) -> Call:
        dx, du = torch.empty_like(self.x), torch.empty_like(self.u)
        locks = [torch.zeros(self.locks, self.h, device=self.device) for _ in "wb"]
        kernel = self.up._group_norm_mul_dropout_bwd_dx_du[(self.n,)]
        return (
            lambda: kernel(
                dx, du, self.dy, *locks, self.x, self.u, None, self.w, self.b, self.mean,
                self.rstd, dx.stride(0), du.stride(0), self.dy.stride(0), self.x.stride(0),
                self.u.stride(0), 0, self.d, self.h, self.eps, self.seed, self.ratio,
                GROUP_N=self.locks, BLOCK_D=self.bd, BLOCK_H=self.bh, TRAINING=self.training,
                CONCAT_UX=False, COMPUTE_Y=False, num_warps=self.warps,
            ),
            (dx, du),
        )  # fmt: skip

    def port_dx(self, block_n: int, num_warps: int, programs: int, **options: int) -> Call:
        """The port's bwd_dx at `programs` programs of `block_n` rows, one partial row each, or
        at 0 a program per row block adding into upstream's lock rows (zeroed once: the sums
        grow from call to call, the time does not); `options`: other launch options (Triton's
        CUDA `maxnreg`)."""
        dx, du = torch.empty_like(self.x), torch.empty_like(self.u)
        atomic = programs == 0
        grid = triton.cdiv(self.n, block_n) if atomic else programs
        rows = self.locks if atomic else programs
        partials = [torch.zeros(rows, self.h, device=self.device) for _ in "wb"]
        kernel = self.port._group_norm_mul_dropout_bwd_dx_du_kernel[(grid,)]
        return (
            lambda: kernel(
                dx, du, self.dy, self.x, self.u, self.w, self.b, self.mean, self.rstd, *partials,
                self.n, self.h, self.d, self.seed, self.ratio, dx.stride(0), du.stride(0),
                self.dy.stride(0), self.x.stride(0), self.u.stride(0), rows, BLOCK_N=block_n,
                BLOCK_H=self.bh, BLOCK_D=self.bd, TRAINING=self.training, ATOMIC=atomic,
                num_warps=num_warps, **options,
            ),
            (dx, du),
        )  # fmt: skip


class BroadcastAddFwd:
    op = "jagged_dense_broadcast_add"

    def __init__(self, case: Case, device: torch.device) -> None:
        spec = get_op(self.op)
        self.port, up = load_port(self.op), spec.upstream.load()
        given = spec.make_inputs(case, device)
        self.x, self.y, self.offsets = given["x"], given["y"], given["offsets"]
        self.msl = int(given["max_seq_len"])
        self.batch, d = self.y.shape
        self.block_d = triton.next_power_of_2(d) if d < 64 else 64  # upstream's
        self.tuned = up.jagged_dense_broadcast_add_kernel
        self.tuned[lambda meta: (self.batch, triton.cdiv(self.msl, meta["BLOCK_N"]))](
            seq_offsets=self.offsets, Jagged=self.x, Dense=self.y, Out=torch.empty_like(self.x),
            AUTOTUNE_MAX_SEQ_LEN=up.autotune_max_seq_len(self.msl), D=d,
            stride_jn=self.x.stride(0), stride_db=self.y.stride(0), stride_on=self.x.stride(0),
            BLOCK_D=self.block_d,
        )  # fmt: skip
        self.pick = self.tuned.best_config
        print(f"{case.name}: upstream's autotune picks {self.pick}", flush=True)
        #: upstream's pick in the port's config terms
        self.picked: Config = {
            **self.pick.kwargs, "BLOCK_D": self.block_d, "num_warps": self.pick.num_warps,
            "num_stages": self.pick.num_stages,
        }  # fmt: skip

    def upstream(self) -> Call:
        out = torch.empty_like(self.x)
        grid = (self.batch, triton.cdiv(self.msl, self.pick.kwargs["BLOCK_N"]))
        kernel, (x, y) = self.tuned.fn[grid], (self.x, self.y)
        return (
            lambda: kernel(
                self.offsets, x, y, out, self.msl, y.size(1), x.stride(0), y.stride(0),
                out.stride(0), BLOCK_D=self.block_d, num_warps=self.pick.num_warps,
                num_stages=self.pick.num_stages, **self.pick.kwargs,
            ),
            (out,),
        )  # fmt: skip

    def launch(self, kernel, config: Config, capped: bool = True, **constexprs) -> Call:
        """`kernel` (the port's signature) at `config`: one program a block (upstream's grid,
        or row blocks of the jagged rows for GRID "rows"), at most CAP programs when `capped`
        (as the port launches), the others looping."""
        out, (x, y) = torch.empty_like(self.x), (self.x, self.y)
        rows = by_rows(config)
        if rows:
            tiles = triton.cdiv(x.size(0), config["BLOCK_N"])
        else:
            tiles = self.batch * triton.cdiv(self.msl, config["BLOCK_N"])
        programs = min(tiles, CAP) if capped else tiles
        steps = (self.batch - 1).bit_length()
        return (
            lambda: kernel[(programs,)](
                self.offsets, x, y, out, self.msl, self.batch, x.size(0), y.size(1), programs,
                steps, x.stride(0), y.stride(0), out.stride(0), BLOCK_N=config["BLOCK_N"],
                BLOCK_D=config["BLOCK_D"], BY_ROWS=rows, num_warps=config["num_warps"],
                num_stages=config["num_stages"], **constexprs,
            ),
            (out,),
        )  # fmt: skip
