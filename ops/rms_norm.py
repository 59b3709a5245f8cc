"""rms_norm (recsys-examples' Triton `triton_rms_norm`): forward and backward of
y = x * rstd * weight, rstd = 1 / sqrt(mean(x^2) + eps), over each row of [N, D]."""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F

from .norm import EPS, UPSTREAM_FILE, NormOp, row_kernels, upstream_warps
from .ports import load_port
from .spec import Case, Config, Tensors

NAME = "rms_norm"


def upstream_group(case: Case) -> int:
    """Upstream's GROUP_N, the rows of dw partials its backward dx locks and adds into: 2048 up
    to D 1024, 1024 up to 4096, 768 up to 8192, else 512 (at most N)."""
    d = case.shape["D"]
    group = 2048 if d <= 1024 else 1024 if d <= 4096 else 768 if d <= 8192 else 512
    return max(1, min(group, case.shape["N"]))


def _dx_default(case: Case) -> Config:
    """Upstream's backward dx runs one program per row whose dw partial goes to row `row %
    GROUP_N` under a lock; the port's programs each keep their own partial row instead (no
    locks), as many as upstream's GROUP_N to a power of two below."""
    group = 1 << (upstream_group(case).bit_length() - 1)
    return {"BLOCK_N": 1, "NUM_PROGRAMS": max(16, group), "num_warps": upstream_warps(case)}


class RMSNorm(NormOp):
    name = NAME
    summary = "RMSNorm with a weight over the rows of [N, D]; fwd and bwd (dx, dw)"
    upstream = dataclasses.replace(
        UPSTREAM_FILE, functions=("triton_rms_norm", "RMSNormFunction"), lines="536-760"
    )
    upstream_function = "RMSNormFunction"
    #: fp32 at twice the default: with D=1 the backward's dy - y * mean(dy * y) cancels (|y| is
    #: 1 up to eps), and the port's fp32 dx lands at 1.04e-4 of the float64 golden's scale.
    tolerance = {"float32": 2e-4, "float16": 5e-3, "bfloat16": 4e-2}
    input_names = ("x", "weight", "dy")
    output_names = ("y", "dx", "dweight")
    stats = ("rstd",)
    partial_names = ("dw_partial",)
    kernels = row_kernels(
        _dx_default, 1,
        {
            "fwd": ("_rms_norm_fwd_kernel", "_weighted_rms_norm_fwd"),
            "bwd_dx": ("_rms_norm_bwd_dx_kernel", "_weighted_rms_norm_bwd_dx"),
            "bwd_dw": ("_rms_norm_bwd_dw_kernel", "_rms_norm_bwd_dwdb"),
        },
        {"fwd": ("y",), "bwd_dx": ("dx",), "bwd_dw": ("dweight",)},
    )  # fmt: skip

    torch_grad_inputs = ("x", "weight")
    torch_grad_outputs = {"y": "dy"}

    def torch_forward(self, inputs: Tensors) -> Tensors:
        x = inputs["x"]
        return {"y": F.rms_norm(x, x.shape[-1:], inputs["weight"], EPS)}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, w, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        rstd = torch.rsqrt((x * x).mean(1, keepdim=True) + EPS)
        xhat = x * rstd
        wdy = w * dy
        c1 = (xhat * wdy).mean(1, keepdim=True)
        return {
            "y": xhat * w,
            "dx": (wdy - xhat * c1) * rstd,
            "dweight": (dy * xhat).sum(0),
            "rstd": rstd[:, 0],
        }

    def row_terms(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        return (inputs["dy"].float() * inputs["x"].float() * inputs["rstd"][:, None],)

    def launchers(self):
        port = load_port(NAME)

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            y, rstd = port.rms_norm_fwd(inputs["x"], inputs["weight"], EPS, config=config)
            return {"y": y, "rstd": rstd}

        def bwd_dx(inputs: Tensors, config: Config | None) -> Tensors:
            dx, dw = port.rms_norm_bwd_dx(
                inputs["dy"], inputs["x"], inputs["weight"], inputs["rstd"], config=config
            )
            return {"dx": dx, "dw_partial": dw}

        def bwd_dw(inputs: Tensors, config: Config | None) -> Tensors:
            dw = port.rms_norm_bwd_dw(
                inputs["dw_partial"], inputs["x"].size(0), inputs["weight"].dtype, config=config
            )
            return {"dweight": dw}

        return {"fwd": fwd, "bwd_dx": bwd_dx, "bwd_dw": bwd_dw}

    def upstream_args(self, inputs: Tensors) -> tuple:
        return inputs["x"], inputs["weight"], EPS


SPEC = RMSNorm()
