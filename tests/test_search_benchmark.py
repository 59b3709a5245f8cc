"""`benchmarks/search_benchmark.py`'s triton.autotune phase, through the port's launchers on the
interpreter, for one kernel of each op family: the configs that differ in what the launcher
reads itself (a norm's NUM_PROGRAMS, a program count) or derives from the config go to tuners
of their own, every config launches, and the launch through triton.autotune's pick is right."""

import sys

import pytest

from autotuner.backends import get_backend
from autotuner.search.space import config_key
from autotuner.search.trial import CaseRunner
from ops.ports import load_port

from .conftest import ROOT

# op, kernel, accuracy case: an FBGEMM jagged copy, bmm, attention and softmax; recsys-examples'
# norm, norm_mul_dropout, addmm, jagged broadcast add and bmm, concat/split.
KERNELS = [
    ("jagged_to_padded_dense", "fwd", "b4_n16_d40_fp32"),
    ("jagged_dense_bmm", "fwd", "b4_n16_d32_t20_fp32"),
    ("jagged_dense_flash_attention", "fwd", "b4_n16_d32_t20_fp32"),
    ("jagged_softmax", "fwd", "b4_n16_d20_fp32"),
    ("layer_norm", "bwd_dx", "n37_d100_fp32"),
    ("group_norm_mul_dropout", "fwd", "n37_h3_d40_fp32"),
    ("addmm", "fwd", "n37_d100_t72_fp32"),
    ("jagged_dense_bmm_broadcast_add", "fwd", "b1_n16_d16_t16_fp32"),
    ("concat_2d_jagged", "fwd", "b5_n12_d40_p0_fp32"),
]


def benchmark():
    """benchmarks/search_benchmark.py as a module (benchmarks/ is not a package)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import search_benchmark
    finally:
        sys.path.pop(0)
    return search_benchmark


def few_configs(plan) -> list[dict]:
    """The default and, of its feasible neighbours, the first that moves each tunable."""
    feasible = {config_key(c) for c in plan.feasible}
    chosen, moved = [plan.default], set()
    for config in plan.space.neighbors(plan.default):
        name = next(k for k in config if config[k] != plan.default[k])
        if config_key(config) in feasible and name not in moved:
            chosen.append(config)
            moved.add(name)
    return chosen


@pytest.mark.parametrize(("op", "kernel", "case"), KERNELS)
def test_the_triton_autotune_phase_launches_every_family(op, kernel, case):
    search_benchmark = benchmark()
    plan = search_benchmark.plan_for(op, kernel, case, "cpu")
    configs = few_configs(plan)
    assert len(configs) >= 2, configs
    plan, launches, launch = search_benchmark.autotuned_launches(
        op, kernel, case, "cpu", configs=configs
    )
    jit = launches[0].tuner.fn
    outside = search_benchmark.launcher_tunables(plan, jit)
    # a config's launcher values never share a tuner with other ones
    for autotuned in launches:
        assert {k: autotuned.config[k] for k in outside} == autotuned.fixed
    assert sum(len(a.tuner.configs) for a in launches) == len(configs)
    runner = CaseRunner(get_backend("cpu"), op, kernel, plan.case)
    for autotuned in launches:
        outputs = launch(autotuned)
        assert len(autotuned.timings()) == len(autotuned.tuner.configs)
        assert autotuned.picked(plan) in configs
        assert runner.error(outputs) <= runner.tolerance, (autotuned.picked(plan), outputs)
    # the shared port module keeps its kernel: a later caller in this process must not launch
    # through a tuner whose inputs are gone (that corrupted the interpreter's heap in later tests)
    assert getattr(load_port(op), plan.kernel.port_kernel) is jit


def test_the_phase_picks_one_of_the_configs_and_counts_the_settings():
    search_benchmark = benchmark()
    op, kernel, case = "layer_norm", "fwd", "n37_d100_fp32"
    configs = few_configs(search_benchmark.plan_for(op, kernel, case, "cpu"))
    result = search_benchmark.autotune_phase(op, kernel, case, "cpu", 0, configs)
    assert result["picked"] in configs
    assert result["configs"] == len(configs)
    programs = {c["NUM_PROGRAMS"] for c in configs}
    assert len(programs) > 1 and result["launcher_settings"] >= len(programs)
