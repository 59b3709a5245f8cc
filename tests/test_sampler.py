"""The search sampler's order (default, warm starts, local, global) and the warm starts' choice,
in in-memory Optuna studies over real kernels' spaces (no device: the objective is a table)."""

import math
import warnings

import optuna
import pytest
from optuna.trial import TrialState

from autotuner.backends import SocProfile
from autotuner.search import warm_starts
from autotuner.search.sampler import Choice, SearchSampler
from autotuner.search.space import config_key
from autotuner.search.study import Plan
from core.limits import DeviceLimits
from core.paths import performance_json
from ops import all_ops, get_op

H200 = DeviceLimits(shared_memory_bytes=232448)
CUDA_OPTIONS = frozenset({"num_warps", "num_stages"})
FA = get_op("jagged_dense_flash_attention")


@pytest.fixture(autouse=True)
def quiet():
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        yield


def plan_of(kernel="fwd", case="b1024_n256_d128_t128_bf16", trials=0.5):
    return Plan.make(
        FA, FA.kernel(kernel), FA.case(case, "performance"), "H200",
        SocProfile(CUDA_OPTIONS, H200, {}), trials,
    )  # fmt: skip


def bowl(plan, centre):
    """A time per config: the sum of ordinal steps from `centre`, plus one (the centre is best)."""
    home = plan.space.position(centre)
    return lambda c: (
        1.0 + sum(abs(a - b) for a, b in zip(plan.space.position(c), home, strict=True))
    )


def search(sampler, plan, objective, trials):
    study = optuna.create_study(direction="minimize", sampler=sampler)
    for _ in range(trials):
        trial = study.ask(sampler.distributions)
        study.tell(trial, objective(plan.space.from_params(trial.params)))
    return study.trials


def test_the_order_is_default_warm_starts_local_then_global_with_a_restart():
    plan = plan_of()
    far = [c for c in plan.feasible if plan.space.position(c)[:2] == (0, 0)]
    warm = [far[0], plan.feasible[-1]]
    sampler = SearchSampler(plan.space, plan.feasible, plan.default, warm_starts=warm, seed=3)
    trials = search(sampler, plan, bowl(plan, plan.default), 40)
    sources = [t.user_attrs["source"] for t in trials]
    configs = [t.user_attrs["config"] for t in trials]
    assert configs[0] == plan.default and sources[0] == "default"
    assert configs[1:3] == warm and sources[1:3] == ["warm", "warm"]
    first_global = sources.index("global")
    assert set(sources[3:first_global]) == {"local", "pattern"}
    # The default is the optimum: its neighbours and pattern moves were all measured first.
    around = {config_key(c) for c in plan.space.neighbors(plan.default)} & {
        config_key(c) for c in plan.feasible
    }
    assert around <= {config_key(c) for c in configs[:first_global]}
    # After the global step, the local search restarts from it: its next proposal is a
    # neighbour of the global step (the best since then).
    after = configs[first_global + 1]
    assert sources[first_global + 1] in ("local", "pattern")
    if sources[first_global + 1] == "local":
        assert after in plan.space.neighbors(configs[first_global])
    assert len({config_key(c) for c in configs}) == len(configs)  # never a config twice
    feasible = {config_key(c) for c in plan.feasible}
    assert {config_key(c) for c in configs} <= feasible


@pytest.mark.parametrize("strategy", ["tpe", "random", "local"])
def test_a_seeded_sampler_replays_the_same_configs(strategy):
    plan = plan_of()
    runs = [
        [
            config_key(t.user_attrs["config"])
            for t in search(
                SearchSampler(plan.space, plan.feasible, plan.default, strategy=strategy, seed=7),
                plan,
                bowl(plan, plan.feasible[len(plan.feasible) // 2]),
                20,
            )
        ]
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(set(runs[0])) == 20


def test_global_strategies_take_the_default_then_only_model_steps():
    plan = plan_of()
    for strategy in ("tpe", "random"):
        sampler = SearchSampler(
            plan.space,
            plan.feasible,
            plan.default,
            strategy=strategy,
            warm_starts=[plan.feasible[0]],
        )
        sources = [
            t.user_attrs["source"] for t in search(sampler, plan, bowl(plan, plan.default), 10)
        ]
        assert sources == ["default"] + ["global"] * 9


def test_exhaustive_goes_out_from_the_default_and_ends_when_all_are_taken():
    plan = plan_of(case="b2048_n512_d256_t32_bf16")
    sampler = SearchSampler(plan.space, plan.feasible, plan.default, strategy="exhaustive")
    trials = search(sampler, plan, bowl(plan, plan.default), len(plan.feasible))
    home = plan.space.position(plan.default)
    steps = [
        sum(
            abs(a - b)
            for a, b in zip(plan.space.position(t.user_attrs["config"]), home, strict=True)
        )
        for t in trials
    ]
    assert steps == sorted(steps)
    assert sorted(config_key(t.user_attrs["config"]) for t in trials) == sorted(
        config_key(c) for c in plan.feasible
    )
    study = optuna.create_study(sampler=sampler)
    for t in trials:
        study.add_trial(t)
    assert sampler.propose(study) is None


def test_taken_configs_are_never_proposed_and_a_pinned_one_is_the_trials():
    plan = plan_of()
    taken = {config_key(plan.default)} | {config_key(c) for c in plan.space.neighbors(plan.default)}
    sampler = SearchSampler(
        plan.space, plan.feasible, plan.default, taken=lambda study: taken, seed=1
    )
    study = optuna.create_study(sampler=sampler)
    for _ in range(10):
        choice = sampler.propose(study)
        assert choice is not None and config_key(choice.config) not in taken
        taken.add(config_key(choice.config))
    pinned = Choice(plan.feasible[-1], "retry")
    sampler.pin(pinned)
    trial = study.ask(sampler.distributions)
    assert plan.space.from_params(trial.params) == pinned.config


def test_failed_configs_are_taken_but_not_measured():
    plan = plan_of()
    sampler = SearchSampler(plan.space, plan.feasible, plan.default, seed=0)
    study = optuna.create_study(sampler=sampler)
    trial = study.ask(sampler.distributions)
    study.tell(trial, state=TrialState.FAIL)  # the default failed: the search goes on around it
    configs = [plan.default]
    for _ in range(5):
        trial = study.ask(sampler.distributions)
        configs.append(plan.space.from_params(trial.params))
        study.tell(trial, 1.0)
    assert len({config_key(c) for c in configs}) == 6
    assert configs[1] in plan.space.neighbors(plan.default)  # nothing measured: around the default
    assert configs[2] in plan.space.neighbors(configs[1])  # then around the best measured


def test_warm_starts_are_projected_nearest_first_feasible_and_few():
    plan = plan_of(case="b2048_n512_d256_t32_bf16", trials=0.5)  # BLOCK_T at most 32 here
    case = plan.case
    sibling = {"BLOCK_T": 64, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2}
    near = dict(case.shape, B=case.shape["B"] // 2)
    far = dict(case.shape, B=case.shape["B"] * 64)
    siblings = [
        warm_starts.Sibling("far", far, case.dtype, "H200", {**sibling, "BLOCK_L": 16}),
        warm_starts.Sibling("near", near, case.dtype, "H200", sibling),
        warm_starts.Sibling("gpu-elsewhere", near, case.dtype, "950PR", {**sibling, "BLOCK_L": 32}),
        warm_starts.Sibling(
            case.name, case.shape, case.dtype, "910B", {"BLOCK_T": 16, "BLOCK_L": 32}
        ),
        warm_starts.Sibling("default", near, case.dtype, "H200", plan.default),
    ]
    chosen = warm_starts.choose(
        plan.space,
        plan.feasible,
        plan.default,
        plan.budget,
        (case.name, case.shape, case.dtype, "H200"),
        siblings,
    )
    projected = {"BLOCK_T": 32, "BLOCK_L": 64, "num_warps": 4, "num_stages": 2}
    # Another soc's winner of this case (distance 0) first, its missing axes at the default's
    # values; then this soc's siblings by distance, BLOCK_T=64 moved into the box; another soc's
    # other cases never; the default never.
    npu = {**plan.default, "BLOCK_T": 16, "BLOCK_L": 32}
    assert chosen == [npu, projected, {**projected, "BLOCK_L": 16}]
    assert all(config_key(c) in {config_key(f) for f in plan.feasible} for c in chosen)
    assert (
        len(
            warm_starts.choose(
                plan.space,
                plan.feasible,
                plan.default,
                4,
                (case.name, case.shape, case.dtype, "H200"),
                siblings,
            )
        )
        == 1
    )  # a quarter of the budget at most
    assert warm_starts.limit(1000) == warm_starts.MAX_WARM_STARTS


def test_warm_starts_from_frozen_configs(tree):
    siblings = warm_starts.from_frozen("jagged_dense_flash_attention", "bwd_dk", tree)
    assert siblings and all(s.soc == "H200" for s in siblings)
    assert all(math.prod(s.shape.values()) > 0 and "BLOCK_T" in s.config for s in siblings)
    performance_json("jagged_dense_flash_attention", tree).write_text("{")
    assert warm_starts.from_frozen("jagged_dense_flash_attention", "bwd_dk", tree) == []


JDBBA = get_op("jagged_dense_bmm_broadcast_add")
# upstream's _get_bmm_configs (recsys-examples triton_jagged.py): its autotuner times all 32
UPSTREAM_BMM = [
    {"BLOCK_M": m, "BLOCK_N": n, "BLOCK_K": k, "num_warps": w, "num_stages": s}
    for m in (64, 128)
    for n in (64, 128)
    for k in (32, 64)
    for s in (2, 3)
    for w in (4, 8)
]


def test_upstreams_autotune_list_is_measured_whole_where_the_budget_holds_it():
    case = JDBBA.case("b512_n1024_d256_t256_bf16", "performance")

    def starts(trials, siblings=()):
        plan = Plan.make(
            JDBBA, JDBBA.kernel("fwd"), case, "H200", SocProfile(CUDA_OPTIONS, H200, {}), trials
        )
        named = (case.name, case.shape, case.dtype, "H200")
        return plan, warm_starts.choose(
            plan.space, plan.feasible, plan.default, plan.budget, named, siblings, UPSTREAM_BMM
        )

    plan, chosen = starts(40)
    # the default (upstream's first config) is the study's first trial; the other 31 follow it
    assert chosen == [c for c in UPSTREAM_BMM if c != plan.default]
    sibling = warm_starts.Sibling(
        "other", dict(case.shape, B=256), case.dtype, "H200", {**plan.default, "BLOCK_M": 32}
    )
    plan, chosen = starts(40, [sibling])
    assert chosen[0] == sibling.config and chosen[1:] == [
        c for c in UPSTREAM_BMM if c != plan.default
    ]
    plan, chosen = starts(32, [sibling])  # 1 + 1 + 31 > 32: the list shares the siblings' cap
    assert chosen == [sibling.config, *[c for c in UPSTREAM_BMM if c != plan.default][:3]]
    plan, chosen = starts(8)
    assert len(chosen) == warm_starts.limit(8) == 2


def test_upstreams_autotune_list_is_read_from_its_autotuner():
    why = JDBBA.upstream.missing()
    if why:
        pytest.skip(why)
    listed = warm_starts.from_upstream(JDBBA, JDBBA.kernel("fwd"))
    assert sorted(map(config_key, listed)) == sorted(map(config_key, UPSTREAM_BMM))
    assert warm_starts.from_upstream(FA, FA.kernel("fwd")) == []  # FBGEMM's: a fixed launch


def test_every_ops_autotune_list_loads_without_importing_fbgemm_gpu():
    """jagged_dense_elementwise_add's kernels live in another file than its pinned wrapper, which
    imports `fbgemm_gpu` by name: reading the list from the wrapper ran fbgemm_gpu's `__init__`,
    whose compiled ops do not load under another torch, and stopped the op's run on the H200."""
    for spec in all_ops().values():
        if spec.upstream.missing():
            continue
        for kernel in spec.kernels:
            warm_starts.from_upstream(spec, kernel)  # raises where a module cannot load


def test_the_polish_climbs_from_the_best_config_through_its_open_neighbours():
    """A model strategy's budget spent far from a bowl's centre: the polish measures the best
    config's open neighbours, moves to a better one and climbs on; it stops where the best has
    no open neighbour, and an exhaustive plan has no polish."""
    plan = plan_of(trials=0.12)
    assert plan.space.most_neighbors == 7  # 2 + 2 + 2 + 1 (two num_stages)
    assert plan.polish == plan.budget // 4 == 2  # the last quarter of 11 trials at most
    centre = plan.feasible[len(plan.feasible) // 2]
    objective = bowl(plan, centre)
    sampler = SearchSampler(plan.space, plan.feasible, plan.default, strategy="random", seed=1)
    study = optuna.create_study(direction="minimize", sampler=sampler)
    for _ in range(plan.budget):
        trial = study.ask(sampler.distributions)
        study.tell(trial, objective(plan.space.from_params(trial.params)))
    before = study.best_value
    polished = []
    while (choice := sampler.polish(study)) is not None and len(polished) < 30:
        assert choice.source == "polish"
        best = plan.space.from_params(study.best_trial.params)
        assert choice.config in plan.space.neighbors(best)
        sampler.pin(choice)
        trial = study.ask(sampler.distributions)
        study.tell(trial, objective(choice.config))
        polished.append(choice.config)
    assert polished and study.best_value < before
    best = plan.space.from_params(study.best_trial.params)
    taken = {config_key(plan.space.from_params(t.params)) for t in study.trials}
    feasible = {config_key(c) for c in plan.feasible}
    assert all(
        config_key(c) in taken or config_key(c) not in feasible for c in plan.space.neighbors(best)
    )
    assert plan_of(trials=1.0).polish == 0
