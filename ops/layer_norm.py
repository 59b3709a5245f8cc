"""layer_norm (recsys-examples' Triton `triton_layer_norm` with a weight and bias): forward and
backward of y = (x - mean) * rstd * weight + bias over each row of [N, D]."""

from __future__ import annotations

import dataclasses

import torch
import torch.nn.functional as F

from .norm import EPS, UPSTREAM_FILE, NormOp, row_kernels, upstream_warps
from .ports import load_port
from .spec import Case, Config, Tensors

NAME = "layer_norm"


def _dx_default(case: Case) -> Config:
    """Upstream's backward dx: min(sms * 8, N / 4) programs walking the rows one at a time
    (1024: an H200's 132 SMs times 8, to a power of two), its forward's num_warps."""
    return {"BLOCK_N": 1, "NUM_PROGRAMS": 1024, "num_warps": upstream_warps(case)}


class LayerNorm(NormOp):
    name = NAME
    summary = "LayerNorm with weight and bias over the rows of [N, D]; fwd and bwd (dx, dw, db)"
    upstream = dataclasses.replace(
        UPSTREAM_FILE, functions=("triton_layer_norm", "LayerNormFunction"), lines="79-533"
    )
    upstream_function = "LayerNormFunction"
    input_names = ("x", "weight", "bias", "dy")
    output_names = ("y", "dx", "dweight", "dbias")
    stats = ("mean", "rstd")
    partial_names = ("dw_partial", "db_partial")
    #: What the port's backward dx takes, in order.
    dx_args = ("dy", "x", "weight", "mean", "rstd")
    kernels = row_kernels(
        _dx_default, 2,
        {
            "fwd": ("_layer_norm_fwd_kernel", "_weighted_layer_norm_fwd"),
            "bwd_dx": ("_layer_norm_bwd_dx_kernel", "_weighted_layer_norm_bwd_dx"),
            "bwd_dw": ("_layer_norm_bwd_dw_kernel", "_layer_norm_bwd_dwdb"),
        },
        {"fwd": ("y",), "bwd_dx": ("dx",), "bwd_dw": ("dweight", "dbias")},
    )  # fmt: skip

    torch_grad_inputs = ("x", "weight", "bias")
    torch_grad_outputs = {"y": "dy"}

    def torch_forward(self, inputs: Tensors) -> Tensors:
        x = inputs["x"]
        return {"y": F.layer_norm(x, x.shape[-1:], inputs["weight"], inputs["bias"], EPS)}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, w, b, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        mean = x.mean(1, keepdim=True)
        centered = x - mean
        rstd = torch.rsqrt((centered * centered).mean(1, keepdim=True) + EPS)
        xhat = centered * rstd
        wdy = w * dy
        c1 = (xhat * wdy).mean(1, keepdim=True)
        c2 = wdy.mean(1, keepdim=True)
        return {
            "y": xhat * w + b,
            "dx": (wdy - xhat * c1 - c2) * rstd,
            "dweight": (dy * xhat).sum(0),
            "dbias": dy.sum(0),
            "mean": mean[:, 0],
            "rstd": rstd[:, 0],
        }

    def row_terms(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        dy = inputs["dy"].float()
        xhat = (inputs["x"].float() - inputs["mean"][:, None]) * inputs["rstd"][:, None]
        return dy * xhat, dy

    def launchers(self):
        port = load_port(self.name)
        fwd_, dx_, dw_ = (getattr(port, f"{self.name}_{k}") for k in ("fwd", "bwd_dx", "bwd_dw"))

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            y, mean, rstd = fwd_(inputs["x"], inputs["weight"], inputs["bias"], EPS, config=config)
            return {"y": y, "mean": mean, "rstd": rstd}

        def bwd_dx(inputs: Tensors, config: Config | None) -> Tensors:
            dx, dw, db = dx_(*(inputs[k] for k in self.dx_args), config=config)
            return {"dx": dx, "dw_partial": dw, "db_partial": db}

        def bwd_dw(inputs: Tensors, config: Config | None) -> Tensors:
            dw, db = dw_(
                inputs["dw_partial"], inputs["db_partial"], inputs["x"].size(0),
                inputs["weight"].dtype, config=config,
            )  # fmt: skip
            return {"dweight": dw, "dbias": db}

        return {"fwd": fwd, "bwd_dx": bwd_dx, "bwd_dw": bwd_dw}

    def upstream_args(self, inputs: Tensors) -> tuple:
        return inputs["x"], inputs["weight"], inputs["bias"], EPS


SPEC = LayerNorm()
