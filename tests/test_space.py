import dataclasses
import json

import pytest
from optuna.distributions import IntDistribution

from autotuner.backends import SocProfile
from autotuner.search.space import config_key, space_for
from autotuner.search.study import Plan
from core.limits import DeviceLimits
from ops import all_ops, get_op

FA = get_op("jagged_dense_flash_attention")
FWD = FA.kernel("fwd")
CUDA_OPTIONS = frozenset({"num_warps", "num_stages"})


def test_axes_are_ordinal_and_round_trip():
    space = space_for(FWD, CUDA_OPTIONS)
    assert space.distributions() == {
        "log2_BLOCK_T": IntDistribution(4, 7),
        "log2_BLOCK_L": IntDistribution(4, 7),
        "log2_num_warps": IntDistribution(1, 3),  # 2, 4, 8
        "num_stages": IntDistribution(2, 3),
    }
    config = {"BLOCK_T": 64, "BLOCK_L": 16, "num_warps": 8, "num_stages": 2}
    assert space.to_params(config)["log2_BLOCK_T"] == 6
    assert space.from_params(space.to_params(config)) == config
    assert config_key(config) == config_key(dict(reversed(config.items())))


def test_launch_options_a_backend_does_not_know_are_not_searched():
    upstream = {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3}
    space = space_for(FWD, frozenset())
    assert [t.name for t in space.tunables] == ["BLOCK_T", "BLOCK_L"]
    assert space.restrict(upstream) == space.complete(upstream) == {"BLOCK_T": 32, "BLOCK_L": 32}
    # Ascend: upstream's default cannot name multibuffer; it gets triton-ascend's default.
    space = space_for(FWD, frozenset({"multibuffer"}))
    assert [t.name for t in space.tunables] == ["BLOCK_T", "BLOCK_L", "multibuffer"]
    assert space.complete(upstream) == {"BLOCK_T": 32, "BLOCK_L": 32, "multibuffer": True}
    with pytest.raises(ValueError, match="names no BLOCK_L, which have no default"):
        space.complete({"BLOCK_T": 32})


def without_multibuffer(kernel):
    return dataclasses.replace(
        kernel, tunables=tuple(t for t in kernel.tunables if t.name != "multibuffer")
    )


@pytest.mark.parametrize("spec", all_ops().values(), ids=lambda spec: spec.name)
def test_gpu_plans_are_those_of_the_kernels_without_ascend_options(spec):
    """multibuffer in every kernel's tunables changes nothing on a GPU or the interpreter: the
    same space, default, feasible and rejected configs, study name and budget, on the op's first
    performance and first accuracy case (the rule is the space's, not a case's: every case took
    2 minutes of the suite)."""
    limits = DeviceLimits(shared_memory_bytes=232448)
    for case in (spec.cases("performance")[0], spec.cases("accuracy")[0]):
        for kernel in spec.kernels:
            assert "multibuffer" in {t.name for t in kernel.tunables}
            now, before = (
                Plan.make(spec, k, case, "H200", SocProfile(CUDA_OPTIONS, limits, {}), 48)
                for k in (kernel, without_multibuffer(kernel))
            )
            assert now.space.tunables == before.space.tunables
            assert json.dumps(now.default) == json.dumps(before.default)
            assert json.dumps(now.feasible) == json.dumps(before.feasible)
            assert now.rejected == before.rejected
            assert (now.name, now.strategy, now.budget) == (
                before.name,
                before.strategy,
                before.budget,
            )


def test_gpu_feasible_space_sizes_of_the_attention():
    limits = DeviceLimits(shared_memory_bytes=232448)
    sizes = {
        kernel: [
            len(
                Plan.make(
                    FA, FA.kernel(kernel), case, "H200", SocProfile(CUDA_OPTIONS, limits, {}), 48
                ).feasible
            )
            for case in FA.cases("performance")
        ]
        for kernel in ("fwd", "bwd_dk")
    }
    assert sizes == {"fwd": [96, 93, 42, 96], "bwd_dk": [96, 93, 42, 96]}


def test_neighbours_and_pattern_moves():
    space = space_for(FWD, CUDA_OPTIONS)
    best = {"BLOCK_T": 64, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3}
    assert len(space.neighbors(best)) == 7  # num_stages 3 has no upper neighbour
    measured = {
        config_key(c): (c, t)
        for c, t in [
            ({**best, "BLOCK_L": 64}, 1.1),  # the two fastest neighbours...
            ({**best, "num_stages": 2}, 1.2),
            ({**best, "num_warps": 8}, 1.5),
            ({**best, "BLOCK_T": 32}, 1.9),
        ]
    }
    moves = space.pattern_moves(best, measured)
    assert moves[0] == {
        "BLOCK_T": 64,
        "BLOCK_L": 64,
        "num_warps": 4,
        "num_stages": 2,
    }  # ...combined first
    assert moves[1] == {"BLOCK_T": 64, "BLOCK_L": 64, "num_warps": 8, "num_stages": 3}
    assert len(moves) == 6  # every pair of the 4 measured neighbours: 4 axes, no pair on one axis


def test_pattern_moves_rank_pairs_of_all_neighbours_by_additive_prediction():
    """As measured on H200 (bwd_dk): the optimum is L+ and stages- at once, each step alone slower
    than the best config, and L+ not among its 3 fastest neighbours (the rule before: only their
    pairs were tried)."""
    space = space_for(FA.kernel("bwd_dk"), CUDA_OPTIONS)
    best = {"BLOCK_T": 64, "BLOCK_L": 32, "num_warps": 4, "num_stages": 3}
    times = {
        "num_stages": {2: 1.09},
        "BLOCK_L": {16: 1.21, 64: 1.34},
        "num_warps": {8: 1.29, 2: 1.66},
        "BLOCK_T": {32: 1.44, 128: 1.58},
    }
    neighbours = {
        config_key({**best, name: value}): ({**best, name: value}, t)
        for name, by_value in times.items()
        for value, t in by_value.items()
    }
    measured = {config_key(best): (best, 1.0), **neighbours}
    optimum = {"BLOCK_T": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2}
    moves = space.pattern_moves(best, measured)
    # t(a) + t(b): stages- with L- 1.30, with warps+ 1.38, with L+ 1.43, ...
    assert moves[:3] == [
        {**best, "num_stages": 2, "BLOCK_L": 16},
        {**best, "num_stages": 2, "num_warps": 8},
        optimum,
    ]
    # 7 neighbours on 4 axes: 21 pairs less the 3 along one axis (T-/T+, L-/L+, warps-/warps+)
    assert len(moves) == 18 and len({config_key(m) for m in moves}) == 18
    assert all(
        sum(a != b for a, b in zip(space.position(m), space.position(best), strict=True)) == 2
        for m in moves
    )

    def predicted(move):
        steps = [{**best, k: v} for k, v in move.items() if v != best[k]]
        return sum(measured[config_key(c)][1] for c in steps) - 1.0

    assert [predicted(m) for m in moves] == sorted(predicted(m) for m in moves)
    # Without the best config's own time: t(a) + t(b), the same order.
    assert space.pattern_moves(best, neighbours) == moves


def test_plan_box_and_static_rejections():
    case = FA.case("b2048_n512_d256_t32_bf16", "performance")
    limits = DeviceLimits(shared_memory_bytes=232448)
    plan = Plan.make(FA, FWD, case, "H200", SocProfile(CUDA_OPTIONS, limits, {}), 0.25)
    # T=32: BLOCK_T above 32 only computes padding, so the box stops at 32.
    assert next(t.values for t in plan.space.tunables if t.name == "BLOCK_T") == (16, 32)
    assert {c["BLOCK_T"] for c in plan.feasible} == {16, 32}
    assert plan.rejected and all("shared memory" in reason for reason in plan.rejected.values())
    assert plan.default in plan.feasible and plan.budget == int(0.25 * len(plan.feasible))
    assert plan.strategy == "local"
