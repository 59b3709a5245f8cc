"""layer_norm_mul_dropout (recsys-examples' Triton `LayerNormMulDropoutFunction`, HSTU's output
norm): forward and backward of y = dropout((LN(x) * weight + bias) * u) over each row of [N, D].

Ported: upstream's form HSTU runs (`concat_ux=False`, a 2-D u whose rows may be strided, as the
slice of the fused uvqk projection `fused_hstu_op` passes), training and inference. Not ported:
`concat_ux` (y = [u, x, y], each dropped out), a 3-D u of heads (`NUM_U_SLICES`), and the
backward's `compute_y` (recomputing y) and `wait_event`/given-`du` hooks.
"""

from __future__ import annotations

import dataclasses

import torch

from .norm import EPS, block_d, row_kernels, upstream_warps
from .norm_mul_dropout import UPSTREAM_FILE, NormMulDropoutOp, dx_bytes, fwd_bytes
from .spec import Case, Config, Tensors

NAME = "layer_norm_mul_dropout"


def _dx_default(case: Case) -> Config:
    """Upstream's backward dx/du: max(1, min(sms * 64, N / 4)) programs walking the rows one at a
    time (8192: an H200's 132 SMs times 64, 8448, to a power of two), its forward's num_warps."""
    return {"BLOCK_N": 1, "NUM_PROGRAMS": 8192, "num_warps": upstream_warps(case)}


def _fwd_tiles(config: Config, case: Case) -> int:
    # the row tile; the weight and bias rows in fp32
    size = case.torch_dtype.itemsize
    return fwd_bytes(config["BLOCK_N"] * block_d(case), size) + 8 * block_d(case)


def _fwd_stream(config: Config, case: Case) -> int:
    return 2 * config["BLOCK_N"] * block_d(case) * case.torch_dtype.itemsize


def _dx_tiles(config: Config, case: Case) -> int:
    # the row tile; w, b and the two gradient sums in fp32
    size = case.torch_dtype.itemsize
    return dx_bytes(config["BLOCK_N"] * block_d(case), size) + 16 * block_d(case)


def _dx_stream(config: Config, case: Case) -> int:
    return 3 * config["BLOCK_N"] * block_d(case) * case.torch_dtype.itemsize


_MODELS = {"fwd": (_fwd_tiles, _fwd_stream), "bwd_dx": (_dx_tiles, _dx_stream)}


class LayerNormMulDropout(NormMulDropoutOp):
    name = NAME
    summary = (
        "dropout(LayerNorm(x) * u) with weight and bias over the rows of [N, D]; fwd and bwd "
        "(dx, du, dw, db)"
    )
    upstream = dataclasses.replace(
        UPSTREAM_FILE,
        functions=(
            "triton_layer_norm_mul_dropout_fwd",
            "triton_layer_norm_mul_dropout_bwd",
            "LayerNormMulDropoutFunction",
        ),
        lines="36-597",
    )
    upstream_function = "LayerNormMulDropoutFunction"
    kernels = tuple(
        dataclasses.replace(k, tile_bytes=_MODELS[k.name][0], stream_bytes=_MODELS[k.name][1])
        if k.name in _MODELS
        else k
        for k in row_kernels(
            _dx_default, 2,
            {
                "fwd": ("_ln_mul_dropout_fwd_kernel", "_ln_mul_dropout_fwd"),
                "bwd_dx": ("_ln_mul_dropout_bwd_dx_du_kernel", "_ln_mul_dropout_bwd_dx_du"),
                "bwd_dw": ("_ln_mul_dropout_bwd_dwdb_kernel", "_ln_mul_dropout_bwd_dwdb"),
            },
            {"fwd": ("y",), "bwd_dx": ("dx", "du"), "bwd_dw": ("dweight", "dbias")},
        )
    )  # fmt: skip

    def affine_width(self, case: Case) -> int:
        return case.shape["D"]

    def torch_norm(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.layer_norm(x, x.shape[-1:], weight, bias, EPS)

    def normalize(self, x, weight, bias):
        mean = x.mean(1)
        rstd = torch.rsqrt(((x - mean[:, None]) ** 2).mean(1) + EPS)
        xhat = self.xhat(x, mean, rstd, weight)
        return xhat * weight + bias, xhat, mean, rstd

    def xhat(self, x, mean, rstd, weight):
        return (x - mean[:, None]) * rstd[:, None]

    def norm_grads(self, grad, xhat, rstd, weight):
        wdy = weight * grad
        c1 = (xhat * wdy).mean(1, keepdim=True)
        c2 = wdy.mean(1, keepdim=True)
        return (wdy - xhat * c1 - c2) * rstd[:, None], grad * xhat, grad

    def upstream_args(self, inputs: Tensors) -> tuple:
        """LayerNormMulDropoutFunction.forward(x, u, weight, bias, eps, dropout_ratio, training,
        concat_ux, seed)."""
        x, u, w, b = (inputs[k] for k in ("x", "u", "weight", "bias"))
        return x, u, w, b, self.eps, self.dropout_ratio, self.training, False, self.seed


SPEC = LayerNormMulDropout()
