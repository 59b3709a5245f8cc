"""What the ops of recsys-examples' `triton_norm_mul_dropout.py` share: y = dropout(norm(x) * u)
over the rows of [N, D] (HSTU's output norm: the attention output normalised, gated by u),
forward and backward, on top of the row norms' shapes, kernels and launch model (`ops.norm`).

Dropout. Upstream draws one Philox number per element, `tl.rand(seed, row * BLOCK_D + col)` with
the row's whole column block BLOCK_D (int32 offsets), keeps an element where the number is over
the ratio (or the ratio is 0), scales kept ones by 1 / (1 - ratio), and draws the same numbers
again in the backward. The ports draw theirs the same way, whatever their row blocks or program
counts, so a config never changes the mask and the mask is upstream's for the same seed.

The op's cases run training's kernels (TRAINING: the numbers are drawn and tested, the work a
training step does) at the ratio `DROPOUT_RATIO` = 0, where the float64 golden holds elementwise;
a ratio over 0 (the mask's determinism, its keep rate, the kept values against the golden with
the port's mask, the mask against upstream's) is tested in each op's tests.
"""

from __future__ import annotations

import zlib
from abc import abstractmethod

import torch

from core.upstream import RECSYS_EXAMPLES

from .norm import EPS, NormOp
from .ports import load_port
from .spec import Case, Config, Tensors, Upstream

UPSTREAM_FILE = Upstream(
    file="examples/hstu/ops/triton_ops/triton_norm_mul_dropout.py",
    sha256="c2e6c3ec607e98f390681d00fd26dc80ea6a5d3c08d72af92967bb9f3dc1f0d7",
    functions=(),
    lines="",
    source=RECSYS_EXAMPLES,
)
#: The dropout ratio the cases run (see the module docstring).
DROPOUT_RATIO = 0.0
#: The seed of the cases' dropout, given to the port and to upstream alike (upstream's test's).
SEED = 1234


def fwd_bytes(elements: int, size: int) -> int:
    """Unified-buffer bytes a forward tile of `elements` needs, a bound from below: x and u in
    their dtype, and 12 bytes of fp32 and int32 work per element (x - mean, y, the dropout's
    offsets and numbers: the compiler reuses the rest). What bishengir-compile 1.2.0 plans: on the
    950PR a 16384-element tile of the group norm in 232 KiB of UB (about 14 B an element); the
    layer norm's asks 320 KiB there and 960 KiB on the 910B (the ATK READMEs' compile verdicts)."""
    return elements * (2 * size + 12)


def dx_bytes(elements: int, size: int) -> int:
    """The same for a backward dx/du tile: x, u and dy in their dtype and 24 bytes of fp32 work
    (xhat, the norm's output, dy, dx, the dropout's numbers)."""
    return elements * (3 * size + 24)


class NormMulDropoutOp(NormOp):
    """y = dropout(norm(x) * u) with a weight and a bias: forward and backward (dx, du, and the
    weight gradients from per-program partial rows, as the row norms).

    The port's three launchers are called alike for every op of the family (`launchers`).
    Subclasses give the normalisation and its backward in float64 (`normalize`, `xhat`,
    `norm_grads`), the widths of a row and of the weight (`row_width`, `affine_width`), what the
    bwd_dw launcher takes to pick its config (`dw_shape`) and upstream's call (`upstream_args`)."""

    input_names = ("x", "u", "weight", "bias", "dy")
    output_names = ("y", "dx", "du", "dweight", "dbias")
    stats = ("mean", "rstd")
    partial_names = ("dw_partial", "db_partial")

    torch_grad_inputs = ("x", "u", "weight", "bias")
    torch_grad_outputs = {"y": "dy"}

    @abstractmethod
    def torch_norm(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        """The normalisation with its weight and bias in plain torch (F.layer_norm, ...)."""

    def torch_forward(self, inputs: Tensors) -> Tensors:
        gated = self.torch_norm(inputs["x"], inputs["weight"], inputs["bias"]) * inputs["u"]
        return {"y": torch.nn.functional.dropout(gated, DROPOUT_RATIO, training=True)}

    @abstractmethod
    def affine_width(self, case: Case) -> int:
        """Elements of weight and bias (D for a LayerNorm, the heads for a GroupNorm)."""

    @abstractmethod
    def normalize(
        self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """(norm(x) * weight + bias, xhat, mean, rstd) of [N, D] rows, in x's dtype."""

    @abstractmethod
    def norm_grads(
        self, grad: torch.Tensor, xhat: torch.Tensor, rstd: torch.Tensor, weight: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        """(dx, per-row dweight terms, per-row dbias terms) of the normalisation for the
        gradient `grad` of its output."""

    def make_inputs(self, case: Case, device: torch.device, seed: int = 0) -> Tensors:
        gen = torch.Generator().manual_seed(zlib.crc32(case.name.encode()) + seed)
        n, d, width = case.shape["N"], self.row_width(case), self.affine_width(case)
        tensors = {
            "x": 2.0 * torch.randn(n, d, generator=gen) + 0.5,
            "u": torch.rand(n, d, generator=gen) + 0.5,  # a SiLU output's scale: around 1
            "weight": 1.0 + 0.1 * torch.randn(width, generator=gen),
            "bias": 0.1 * torch.randn(width, generator=gen),
            "dy": torch.randn(n, d, generator=gen),
        }
        return {k: tensors[k].to(case.torch_dtype).to(device) for k in self.input_names}

    def row_width(self, case: Case) -> int:
        """Elements of a row of x, u and y."""
        return case.shape["D"]

    def reference(
        self,
        inputs: Tensors,
        compute_dtype: torch.dtype = torch.float64,
        keep: torch.Tensor | None = None,
        ratio: float = DROPOUT_RATIO,
    ) -> Tensors:
        """The golden at the cases' ratio 0; with `keep` (a boolean [N, D] mask, e.g. the port's)
        and `ratio`, that mask applied as upstream's dropout applies it, forward and backward."""
        x, u, w, b, dy = (inputs[k].to(compute_dtype) for k in self.input_names)
        ln, xhat, mean, rstd = self.normalize(x, w, b)
        scale = 1.0 if keep is None else keep.to(compute_dtype) / (1.0 - ratio)
        grad = dy * scale * u  # the gradient of the normalisation's output
        dx, dw_terms, db_terms = self.norm_grads(grad, xhat, rstd, w)
        return {
            "y": ln * u * scale,
            "dx": dx,
            "du": dy * scale * ln,
            "dweight": dw_terms.sum(0),
            "dbias": db_terms.sum(0),
            "mean": mean,
            "rstd": rstd,
        }

    def row_terms(self, inputs: Tensors) -> tuple[torch.Tensor, ...]:
        x, u, w, dy = (inputs[k].float() for k in ("x", "u", "weight", "dy"))
        mean, rstd = inputs["mean"].float(), inputs["rstd"].float()
        _, dw_terms, db_terms = self.norm_grads(dy * u, self.xhat(x, mean, rstd, w), rstd, w)
        return dw_terms, db_terms

    @abstractmethod
    def xhat(
        self, x: torch.Tensor, mean: torch.Tensor, rstd: torch.Tensor, weight: torch.Tensor
    ) -> torch.Tensor:
        """(x - mean) * rstd of [N, D] rows with the statistics as `normalize` gives them (the
        weight says how many groups a row has)."""

    def traffic(self, case: Case, part: str) -> tuple[int, int]:
        """fwd: x and u read, y written; bwd: x, u and dy read, dx and du written (the weights
        and partial rows are small beside them). Flops per element: about 10 forward (and the
        Philox rounds of the dropout numbers, not counted), 16 backward."""
        elements = case.shape["N"] * self.row_width(case)
        size = case.torch_dtype.itemsize
        if part == "fwd":
            return 3 * elements * size, 10 * elements
        return 5 * elements * size, 16 * elements

    # -- the port ------------------------------------------------------------------------------
    def dw_shape(self, inputs: Tensors) -> tuple[int, ...]:
        """What the port's bwd_dw launcher takes between the partial rows and the dtype to pick
        its config: the rows N (and the head width, for a GroupNorm)."""
        return (inputs["x"].size(0),)

    def form(self, inputs: Tensors) -> dict[str, int]:
        """Upstream's keyword arguments the port's forward takes besides the dropout's: none for
        a LayerNorm (num_heads and linear_dim for a GroupNorm)."""
        return {}

    def launchers(self):
        """The port's `<op>_fwd`, `<op>_bwd_dx` and `<op>_bwd_dw`, called alike by every op of
        the family, at the spec's eps, dropout ratio, training and seed."""
        port = load_port(self.name)
        fwd_, dx_, dw_ = (getattr(port, f"{self.name}_{k}") for k in ("fwd", "bwd_dx", "bwd_dw"))
        dropout = (self.dropout_ratio, self.training, self.seed)

        def fwd(inputs: Tensors, config: Config | None) -> Tensors:
            x, u, w, b = (inputs[k] for k in ("x", "u", "weight", "bias"))
            y, mean, rstd = fwd_(
                x, u, w, b, self.eps, self.dropout_ratio, self.training, seed=self.seed,
                **self.form(inputs), config=config,
            )  # fmt: skip
            return {"y": y, "mean": mean, "rstd": rstd}

        def bwd_dx(inputs: Tensors, config: Config | None) -> Tensors:
            args = (inputs[k] for k in ("dy", "x", "u", "weight", "bias", "mean", "rstd"))
            dx, du, dw, db = dx_(*args, *dropout, config=config)
            return {"dx": dx, "du": du, "dw_partial": dw, "db_partial": db}

        def bwd_dw(inputs: Tensors, config: Config | None) -> Tensors:
            dw, db = dw_(
                inputs["dw_partial"], inputs["db_partial"], *self.dw_shape(inputs),
                inputs["weight"].dtype, config=config,
            )  # fmt: skip
            return {"dweight": dw, "dbias": db}

        return {"fwd": fwd, "bwd_dx": bwd_dx, "bwd_dw": bwd_dw}

    # -- the port's and upstream's arguments -------------------------------------------------------
    #: eps, dropout ratio, training and seed of every launch of the cases (port and upstream).
    eps = EPS
    dropout_ratio = DROPOUT_RATIO
    training = True
    seed = SEED
