"""The ops of recsys-examples' triton_norm_mul_dropout.py (ops/norm_mul_dropout.py): dropout at a
ratio over 0, which `verify` (the cases run p = 0) does not cover, and each kernel alone with
programs walking several row blocks.

At p > 0: the port's mask is a function of the seed alone (not of the config), its keep rate is
within a binomial bound, the kept values agree with the float64 golden under the port's mask,
forward and backward (so the backward draws the forward's mask), and the mask is upstream's
where upstream runs (its forward runs in the interpreter; a checkout is needed)."""

import copy
import math

import pytest
import torch

from core.upstream import RECSYS_EXAMPLES
from ops import all_ops

OPS = sorted(name for name, spec in all_ops().items() if "norm_mul_dropout" in spec.upstream.file)
RATIO = 0.3
#: A row kernel's config of a few programs walking blocks of several rows (fast in the interpreter).
WALKS = {"BLOCK_N": 16, "NUM_PROGRAMS": 4}


def test_the_family_is_found():
    assert "layer_norm_mul_dropout" in OPS


def at(op, ratio=RATIO, seed=7):
    """The op's spec with its launches at this dropout ratio and seed."""
    spec = copy.copy(all_ops()[op])
    spec.dropout_ratio, spec.seed = ratio, seed
    return spec


def inputs_of(spec, cpu):
    case = next(c for c in spec.cases("accuracy") if c.dtype == "float32" and c.shape["N"] > 100)
    return case, spec.make_inputs(case, cpu.device)


def close(have, want):
    return torch.allclose(have.double(), want.double(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", OPS)
def test_each_kernel_alone_computes_its_outputs(op, cpu):
    """Rows not a multiple of the row block, a few programs walking several row blocks each:
    every kernel run alone on its inputs gives the golden."""
    spec = all_ops()[op]
    case, inputs = inputs_of(spec, cpu)
    golden = spec.reference(inputs)
    for kernel in spec.kernels:
        default = kernel.default(case)
        walks = {"BLOCK_N": 4, "NUM_PROGRAMS": 16} if "NUM_PROGRAMS" in default else {"BLOCK_N": 8}
        out = spec.launch(kernel.name, spec.kernel_inputs(kernel.name, inputs, golden),
                          dict(default, **walks))  # fmt: skip
        for name in kernel.outputs:
            assert close(out[name], golden[name]), name


@pytest.mark.parametrize("op", OPS)
def test_the_mask_is_the_seeds_whatever_the_config(op, cpu):
    spec = at(op)
    _, inputs = inputs_of(spec, cpu)
    first = spec.launch("fwd", inputs, None)  # the default: one row a program
    again = spec.launch("fwd", inputs, WALKS)
    assert torch.equal(first["y"], again["y"])
    assert torch.equal(again["y"], spec.launch("fwd", inputs, WALKS)["y"])
    other = at(op, seed=8).launch("fwd", inputs, WALKS)["y"]
    assert not torch.equal(first["y"] == 0, other == 0)


@pytest.mark.parametrize("op", OPS)
def test_the_keep_rate_is_within_a_binomial_bound(op, cpu):
    spec = at(op)
    _, inputs = inputs_of(spec, cpu)
    y = spec.launch("fwd", inputs, WALKS)["y"]
    n, kept = y.numel(), int((y != 0).sum())
    sigma = math.sqrt(n * RATIO * (1 - RATIO))
    assert abs(kept - n * (1 - RATIO)) < 5 * sigma, (kept, n)


@pytest.mark.parametrize("op", OPS)
def test_kept_values_and_gradients_agree_with_the_golden_under_the_ports_mask(op, cpu):
    spec = at(op)
    _, inputs = inputs_of(spec, cpu)
    out = spec.run_port(inputs, {"fwd": WALKS, "bwd_dx": WALKS})
    keep = out["y"] != 0
    golden = spec.reference(inputs, keep=keep, ratio=RATIO)
    assert keep.float().mean() < 0.9  # the mask drops some
    for name in spec.output_names:
        assert close(out[name], golden[name]), name


@pytest.mark.parametrize("op", OPS)
def test_outside_training_nothing_is_dropped(op, cpu):
    spec = at(op)
    _, inputs = inputs_of(spec, cpu)
    spec.training = False
    y = spec.launch("fwd", inputs, WALKS)["y"]
    assert close(y, spec.reference(inputs)["y"])


@pytest.mark.skipif(RECSYS_EXAMPLES.missing() is not None, reason=RECSYS_EXAMPLES.missing() or "")
@pytest.mark.parametrize("op", OPS)
def test_the_mask_is_upstreams(op, cpu):
    """Upstream's forward at the same ratio and seed drops the same elements, and keeps the same
    values (its forward runs in the interpreter; its backward reads the SM count: CUDA only)."""
    spec = at(op)
    case, inputs = inputs_of(spec, cpu)
    theirs = spec.run_upstream(inputs, case)["y"]
    ours = spec.launch("fwd", inputs, WALKS)["y"]
    assert torch.equal(ours == 0, theirs == 0)
    assert close(ours, theirs)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="upstream's backward runs on CUDA only")
@pytest.mark.skipif(RECSYS_EXAMPLES.missing() is not None, reason=RECSYS_EXAMPLES.missing() or "")
@pytest.mark.parametrize("op", OPS)
def test_forward_and_backward_are_upstreams_on_cuda(op):
    """On a GPU, upstream's forward and backward at the same ratio and seed: the same dropped
    elements, and the same outputs within fp32 rounding (the backward's mask drawn again)."""
    spec = at(op)
    case = next(c for c in spec.cases("accuracy") if c.dtype == "float32" and c.shape["N"] > 100)
    inputs = spec.make_inputs(case, torch.device("cuda"))
    ours, theirs = spec.run_port(inputs), spec.run_upstream(inputs, case)
    assert torch.equal(ours["y"] == 0, theirs["y"] == 0)
    for name in spec.output_names:
        assert close(ours[name], theirs[name]), name
