"""jagged_jagged_bmm (FBGEMM Triton `JaggedJaggedBmm`): x^T y per sequence of two jagged tensors.

out[b] = x[rows of b]^T @ y[rows of b] over the first min(len_b, max_seq_len) rows: [B, D, T],
zeros for an empty sequence. Backward as upstream's autograd Function, both through the jagged x
dense kernel: dx = y @ dout^T and dy = x @ dout per sequence (zeros past max_seq_len).
"""

from __future__ import annotations

import torch

from .cases import effective_lengths, total_rows
from .jagged import pad_rows
from .jagged_dense_bmm import (
    UPSTREAM_FILE,
    UPSTREAM_LINES,
    UPSTREAM_SHA256,
    JaggedBmmOp,
    _d,
    _n,
    _t,
    bmm_kernel,
    dense_bmm_default,
    jagged_bmm_default,
)
from .spec import Case, Tensors, Upstream

NAME = "jagged_jagged_bmm"


class JaggedJaggedBmm(JaggedBmmOp):
    name = NAME
    summary = (
        "Jagged [sum_L, D]^T times jagged [sum_L, T] per sequence -> dense [B, D, T]; fwd and bwd"
    )
    upstream = Upstream(
        file=UPSTREAM_FILE,
        sha256=UPSTREAM_SHA256,
        functions=("JaggedJaggedBmm", "triton_jagged_jagged_bmm", "triton_jagged_dense_bmm"),
        lines=UPSTREAM_LINES,
    )
    port_functions = ("jagged_jagged_bmm_fwd", "jagged_jagged_bmm_bwd")
    upstream_function = "JaggedJaggedBmm"
    kernels = (
        # out = x^T [D, sum_L] @ y [sum_L, T]
        bmm_kernel(
            "fwd", False, ("D", "T", "max_seq_len"),
            lambda c: jagged_bmm_default(_d(c), _t(c)), ("out",), "a",
        ),
        # dx = y [sum_L, T] @ dout^T [B, T, D]
        bmm_kernel(
            "bwd_dx", True, ("max_seq_len", "D", "T"),
            lambda c: dense_bmm_default(_n(c), _d(c), _t(c)), ("dx",), "b",
        ),
        # dy = x [sum_L, D] @ dout [B, D, T]
        bmm_kernel(
            "bwd_dy", True, ("max_seq_len", "T", "D"),
            lambda c: dense_bmm_default(_n(c), _t(c), _d(c)), ("dy",),
        ),
    )  # fmt: skip

    def _y_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        return rows, case.shape["T"]

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """E = sum_b min(len_b, max_seq_len) rows used, R = sum_L rows, out/dout dense [B, D, T].
        fwd: x (E x D) and y (E x T) read, out written; 2 E D T flops. bwd (dx = y dout^T,
        dy = x dout): y (E x T), x (E x D) and dout read, dx (R x D) and dy (R x T) written,
        zeros past max_seq_len; 2 dots, 4 E D T flops."""
        b, d, t = (case.shape[k] for k in ("B", "D", "T"))
        e, r = sum(effective_lengths(case)), total_rows(case)
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return (e * d + e * t + b * d * t) * size, 2 * e * d * t
        return (e * t + e * d + b * d * t + r * d + r * t) * size, 4 * e * d * t

    def _dout_shape(self, case: Case, rows: int) -> tuple[int, ...]:
        return case.shape["B"], case.shape["D"], case.shape["T"]

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        n, offsets = int(inputs["max_seq_len"]), inputs["offsets"]
        x, y = (inputs[k].to(compute_dtype).detach().requires_grad_() for k in ("x", "y"))
        xp, _ = pad_rows(x, offsets, n)
        yp, _ = pad_rows(y, offsets, n)
        out = torch.bmm(xp.transpose(1, 2), yp)
        out.backward(inputs["dout"].to(compute_dtype))
        return {"out": out.detach(), "dx": x.grad, "dy": y.grad}


SPEC = JaggedJaggedBmm()
