"""swish_layer_norm (recsys-examples' Triton `triton_swish_layer_norm`): forward and backward of
y = sigmoid(z) * x, z = (x - mean) * rstd * weight + bias, over each row of [N, D]."""

from __future__ import annotations

import dataclasses

import torch

from .layer_norm import LayerNorm
from .norm import EPS
from .spec import Tensors

NAME = "swish_layer_norm"


class SwishLayerNorm(LayerNorm):
    name = NAME
    summary = "Swish of a LayerNorm, sigmoid(LN(x) * w + b) * x, per row of [N, D]; fwd and bwd"
    upstream = dataclasses.replace(
        LayerNorm.upstream,
        functions=("triton_swish_layer_norm", "SwishLayerNormFunction"),
        lines="763-877",
    )
    upstream_function = "SwishLayerNormFunction"
    dx_args = ("dy", "x", "weight", "bias", "mean", "rstd")
    kernels = tuple(
        dataclasses.replace(
            k, port_kernel=k.port_kernel.replace("_layer_norm", "_swish_layer_norm", 1)
        )
        for k in LayerNorm.kernels
    )

    def torch_forward(self, inputs: Tensors) -> Tensors:
        x = inputs["x"]
        z = torch.nn.functional.layer_norm(x, x.shape[-1:], inputs["weight"], inputs["bias"], EPS)
        return {"y": torch.sigmoid(z) * x}

    def reference(self, inputs: Tensors, compute_dtype: torch.dtype = torch.float64) -> Tensors:
        x, w, b, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        mean = x.mean(1, keepdim=True)
        centered = x - mean
        rstd = torch.rsqrt((centered * centered).mean(1, keepdim=True) + EPS)
        xhat = centered * rstd
        s = torch.sigmoid(xhat * w + b)
        through = dy * x * s * (1 - s)  # dL/dz
        g = through * w
        dx = (g - xhat * (g * xhat).mean(1, keepdim=True) - g.mean(1, keepdim=True)) * rstd
        return {
            "y": s * x,
            "dx": dx + dy * s,
            "dweight": (through * xhat).sum(0),
            "dbias": through.sum(0),
            "mean": mean[:, 0],
            "rstd": rstd[:, 0],
        }

    def row_terms(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        x, dy = inputs["x"].float(), inputs["dy"].float()
        xhat = (x - inputs["mean"][:, None]) * inputs["rstd"][:, None]
        s = torch.sigmoid(xhat * inputs["weight"].float() + inputs["bias"].float())
        through = dy * x * s * (1 - s)
        return through * xhat, through


SPEC = SwishLayerNorm()
