"""The persistent form of the kernels with a program count: the same outputs at every count."""

from __future__ import annotations

import sys

import pytest

from autotuner.backends import get_backend
from autotuner.search import warm_starts
from autotuner.search.space import space_for
from core.limits import DeviceLimits
from ops import get_op
from ops.ports import load_port
from ops.tunable import PROGRAMS

from .conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))
from persistent_grid import base_config, check, persistent_kernels  # noqa: E402


def test_copy_and_softmax_kernels_have_a_program_count():
    assert {(spec.name, kernel.name) for spec, kernel in persistent_kernels()} >= {
        ("jagged_to_padded_dense", "fwd"),
        ("dense_to_jagged", "fwd"),
        ("jagged_softmax", "fwd"),
        ("jagged_softmax", "bwd"),
        ("jagged_dense_elementwise_add", "fwd"),
        ("jagged_dense_elementwise_add", "bwd"),
    }


COPY, SOFTMAX = "b4_n16_d40_fp32", "b4_n16_d20_fp32"  # accuracy cases of several tiles


@pytest.mark.parametrize(
    "op, kernel, case_name",
    [("jagged_to_padded_dense", "fwd", COPY), ("dense_to_jagged", "fwd", COPY),
     ("jagged_softmax", "fwd", SOFTMAX), ("jagged_softmax", "bwd", SOFTMAX),
     ("jagged_dense_elementwise_add", "fwd", COPY), ("jagged_dense_elementwise_add", "bwd", COPY),
     ("jagged_dense_broadcast_add", "fwd", SOFTMAX), ("jagged_dense_broadcast_add", "bwd", SOFTMAX)],
)  # fmt: skip
def test_every_program_count_gives_the_classic_grids_outputs(op, kernel, case_name, monkeypatch):
    """One core: programs 1, 2 and 4 each loop over several of the case's tiles."""
    backend = get_backend("cpu")
    spec = get_op(op)
    monkeypatch.setattr(load_port(op), "_cores", lambda device: 1)
    case = spec.case(case_name, "accuracy")
    kernel_spec = spec.kernel(kernel)
    config = base_config(spec, kernel_spec, case, backend)
    if "BLOCK_D" in config:
        config["BLOCK_D"] = 8  # 12 tiles rather than 80: the interpreter's time
    verdicts = check(spec, kernel_spec, case, backend, config)
    assert verdicts == {p: "" for p in (0, 1, 2, 4)}


def test_the_default_config_keeps_the_classic_grid():
    kernel = get_op("jagged_softmax").kernel("fwd")
    case = get_op("jagged_softmax").case("b2048_n256_d64_fp16", "performance")
    space = space_for(kernel, frozenset({"multibuffer"}))
    default = space.complete(kernel.default(case))
    assert default[PROGRAMS.name] == 0
    limits = DeviceLimits(vector_cores=48)
    classic = kernel.launch_grid(default, case, limits)
    assert classic == kernel.grid(default, case) == (2048 * 64,)
    assert kernel.launch_grid({**default, "PROGRAMS": 2}, case, limits) == (96,)
    # capped by the work: 4 tiles, at most 4 programs
    tiny = get_op("jagged_softmax").case("b4_n16_d20_fp32", "accuracy")
    wide = {**space.complete(kernel.default(tiny)), "BLOCK_D": 32, "PROGRAMS": 4}
    assert kernel.launch_grid(wide, tiny, limits) == (4,)


def test_the_program_count_is_an_ordinal_axis():
    kernel = get_op("jagged_to_padded_dense").kernel("fwd")
    space = space_for(kernel, frozenset({"num_warps"}))
    distribution = space.distributions()["rank_PROGRAMS"]
    assert (distribution.low, distribution.high) == (0, 3)
    config = {**space.complete(kernel.default(None)), "PROGRAMS": 4}
    assert space.to_params(config)["rank_PROGRAMS"] == 2
    assert space.from_params(space.to_params(config)) == config
    assert {n["PROGRAMS"] for n in space.neighbors(config)} == {2, 4, 0}


def test_a_winner_of_a_space_without_the_program_count_warm_starts_one_with_it():
    """A sibling frozen before the program count existed: its tiles, on the classic grid."""
    kernel = get_op("jagged_to_padded_dense").kernel("fwd")
    case = get_op("jagged_to_padded_dense").case("b2048_n256_d64_fp16", "performance")
    space = space_for(kernel, frozenset({"num_warps"}))
    default = space.complete(kernel.default(case))
    old = {"BLOCK_ROW": 8, "BLOCK_COL": 64, "num_warps": 2}
    sibling = warm_starts.Sibling("other", dict(case.shape), case.dtype, "H200", old)
    feasible = space.feasible(case, DeviceLimits(cores=132))
    starts = warm_starts.choose(
        space, feasible, default, 40, (case.name, case.shape, case.dtype, "H200"), [sibling]
    )
    assert starts == [{**old, "PROGRAMS": 0}]
