"""Ascend search spaces without an NPU: the tunables and launch options of each soc and
compile mode (SIMD, SIMT), the NPU default, and `autotune space` as a user runs it."""

import json

import pytest
from optuna.distributions import CategoricalDistribution
from optuna.trial import TrialState, create_trial

from autotuner.backends import npu as npu_module
from autotuner.backends import soc_profile
from autotuner.backends.cuda import CudaBackend
from autotuner.backends.npu import (
    npu_launch_options,
    npu_limits,
)
from autotuner.search.space import config_key, space_for
from autotuner.search.space_report import describe
from autotuner.search.study import Plan
from core.errors import UserError
from core.limits import DeviceLimits
from ops import all_ops, get_op

from .conftest import KIB, autotune_cli

FA = get_op("jagged_dense_flash_attention")


# -- search spaces per soc -----------------------------------------------------------------------


def names(kernel, launch_options) -> set[str]:
    return {t.name for t in space_for(kernel, launch_options).tunables}


@pytest.mark.parametrize("soc", ["950PR", "950DT", "910B", "910_93"])
def test_simd_spaces_have_multibuffer_and_no_warps_on_every_soc(soc):
    launch_options = npu_launch_options("simd")
    assert launch_options == {"multibuffer"}
    for spec in all_ops().values():
        for kernel in spec.kernels:
            searched = names(kernel, launch_options)
            assert "multibuffer" in searched, (spec.name, kernel.name)
            assert not {"num_warps", "num_stages", "compile_mode"} & searched


def test_simt_spaces_search_triton_ascends_warps_in_simt_only_mode():
    space = space_for(FA.kernel("fwd"), npu_launch_options("simt"))
    assert {t.name: t.values for t in space.tunables} == {
        "BLOCK_T": (16, 32, 64, 128),
        "BLOCK_L": (16, 32, 64, 128),
        "num_warps": (8, 16, 32, 64),
        "compile_mode": ("simt_only",),
    }
    # Upstream's 4 warps are no SIMT warp count: the default takes triton-ascend's 32.
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    default = space.complete(FA.kernel("fwd").default(case))
    assert default == {"BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 32, "compile_mode": "simt_only"}
    assert FA.kernel("fwd").violation(default, case, npu_limits("950PR", "simt")) is None
    assert space.distributions()["compile_mode"] == CategoricalDistribution(("simt_only",))
    assert space.from_params(space.to_params(default)) == default
    # SIMT code runs on the vector cores: the UB beside the data cache, no L1 or L0C.
    assert npu_limits("950PR", "simt") == DeviceLimits(
        unified_buffer_bytes=216 * KIB, max_total_blocks=65535, cores=36, vector_cores=72
    )


def test_simt_is_for_the_950_family_only():
    with pytest.raises(UserError, match="--npu-mode simt needs a 950 soc"):
        npu_module.check_mode("910B", "simt")
    npu_module.check_mode("950DT", "simt")
    with pytest.raises(UserError, match="unknown --npu-mode 'simdd'"):
        npu_module.check_mode("950PR", "simdd")


def test_a_gpu_space_has_warps_and_stages_and_no_multibuffer():
    for spec in all_ops().values():
        for kernel in spec.kernels:
            searched = names(kernel, CudaBackend.launch_options)
            assert "num_warps" in searched and "multibuffer" not in searched
    assert "num_stages" in names(FA.kernel("fwd"), CudaBackend.launch_options)


def test_multibuffer_is_an_on_off_category_kept_as_booleans():
    space = space_for(FA.kernel("fwd"), npu_launch_options())
    distributions = space.distributions()
    assert distributions["multibuffer"] == CategoricalDistribution((False, True))
    config = {"BLOCK_T": 64, "BLOCK_L": 16, "multibuffer": False}
    params = space.to_params(config)
    assert space.from_params(params) == config and params["multibuffer"] is False
    assert config_key(config) == '{"BLOCK_L":16,"BLOCK_T":64,"multibuffer":false}'
    # As a study (autotuner.search.study) records a statically rejected config.
    trial = create_trial(params=params, distributions=distributions, state=TrialState.FAIL)
    assert trial.params == params
    assert space.neighbors(config) == [
        {**config, "BLOCK_T": 32},
        {**config, "BLOCK_T": 128},
        {**config, "BLOCK_L": 32},
        {**config, "multibuffer": True},
    ]


def test_the_npu_default_is_upstreams_plus_the_compilers_multibuffer():
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    for soc, default in [
        ("910B", {"BLOCK_T": 32, "BLOCK_L": 32, "multibuffer": True}),
        ("950PR", {"BLOCK_T": 32, "BLOCK_L": 32, "multibuffer": False}),
    ]:
        plan = Plan.make(FA, FA.kernel("fwd"), case, soc, soc_profile(soc), 48)
        assert plan.default == default and plan.default in plan.feasible
        assert plan.default_violation is None


# -- `autotune space`, without the soc's device ---------------------------------------------------

ATTENTION = ("space", "--op", "jagged_dense_flash_attention", "--kernel", "fwd")
ISSUE_CASE = ("--case", "b1024_n256_d128_t128_bf16")


def space_json(*args: str) -> dict:
    result = autotune_cli(*ATTENTION, *ISSUE_CASE, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("soc", ["950PR", "910B"])
def test_space_json_of_the_attention_forward_has_no_warps_in_simd_mode(soc):
    report = space_json("--soc", soc)
    assert [t["name"] for t in report["tunables"]] == ["BLOCK_T", "BLOCK_L", "multibuffer"]
    configs = report["feasible"] + [r["config"] for r in report["rejected"]]
    assert len(configs) == 32 and not any("num_warps" in c for c in configs)
    # Every tile shape fits the model: q, k and v go to L1 only, and the largest, 128 x 128,
    # leaves 164864 B of UB tiles (the 910B's compiler plans it in 186368 B, multibuffered too).
    # On the 950 the compiler aborts on p's 16-element bf16 rows (BLOCK_T=16): the model says so.
    crashes = [r for r in report["rejected"] if r["config"]["BLOCK_T"] == 16]
    assert len(crashes) == (8 if soc == "950PR" else 0) == len(report["rejected"])
    assert all(r["reason"].startswith("the compiler aborts on a dot operand") for r in crashes)
    assert report["judged_by"].startswith("the static constraints")
    assert report["default"]["config"]["multibuffer"] is (soc == "910B")


def test_space_in_simt_mode_searches_warps_and_says_why_it_rejects():
    report = space_json("--soc", "950PR", "--npu-mode", "simt")
    assert [t["values"] for t in report["tunables"]][2:] == [[8, 16, 32, 64], ["simt_only"]]
    assert report["default"]["config"] == {
        "BLOCK_T": 32, "BLOCK_L": 32, "num_warps": 32, "compile_mode": "simt_only"
    }  # fmt: skip
    assert len(report["feasible"]) == 60 and len(report["rejected"]) == 4
    assert {r["reason"] for r in report["rejected"]} == {
        "tiles need 263168 B of unified buffer, over 221184 B"
    }


def test_space_as_text_lists_every_config():
    result = autotune_cli(*ATTENTION, *ISSUE_CASE, "--soc", "H200")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "  num_stages: 2, 3" in lines and "feasible: 96" in lines and "rejected: 0" in lines


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--soc", "910C"), "error: unknown soc '910C'; known socs: cpu, 950PR"),
        (("--soc", "910B", "--npu-mode", "simt"), "error: --npu-mode simt needs a 950 soc"),
        (("--soc", "H200", "--npu-mode", "simt"), "error: --npu-mode simt is for an Ascend soc"),
        (("--soc", "950PR", "--npu-mode", "mimd"), "error: unknown --npu-mode 'mimd'"),
    ],
)
def test_space_bad_soc_or_mode_is_one_line_and_exit_2(args, message):
    result = autotune_cli(*ATTENTION, *ISSUE_CASE, *args)
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(message), result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--op", "nope", "--kernel", "fwd", "--case", "x"), "error: unknown op 'nope'"),
        (
            ("--op", "jagged_dense_flash_attention", "--kernel", "bwd", "--case", "x"),
            "error: unknown kernel 'bwd' for jagged_dense_flash_attention; valid: fwd,",
        ),
        (
            ("--op", "jagged_dense_flash_attention", "--kernel", "fwd", "--case", "b1"),
            "error: unknown case 'b1' for jagged_dense_flash_attention; valid: ",
        ),
    ],
)
def test_space_bad_op_kernel_or_case_is_one_line_and_exit_2(args, message):
    result = autotune_cli("space", *args, "--soc", "910B")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(message), result.stderr


# -- compiler options (`--npu-options`) ------------------------------------------------------------


def test_compiler_options_join_only_the_spaces_of_dot_kernels_that_ask_for_them():
    profile = soc_profile("910B", npu_options=("unit_flag", "set_workspace_multibuffer"))
    fwd = space_for(FA.kernel("fwd"), profile.launch_options, profile.option_defaults)
    assert [t.name for t in fwd.tunables] == [
        "BLOCK_T", "BLOCK_L", "multibuffer", "unit_flag", "set_workspace_multibuffer",
    ]  # fmt: skip
    # Ordered values are ordinal axes (log2), on/off and names are categories.
    params = fwd.distributions()
    assert isinstance(params["unit_flag"], CategoricalDistribution)
    assert params["log2_set_workspace_multibuffer"].low == 1
    # A vector-only kernel has none of them; without --npu-options no kernel has any.
    copy = get_op("jagged_to_padded_dense").kernel("fwd")
    vector = space_for(copy, profile.launch_options, profile.option_defaults)
    assert [t.name for t in vector.tunables] == [
        "BLOCK_ROW",
        "BLOCK_COL",
        "multibuffer",
        "PROGRAMS",
    ]
    plain = soc_profile("910B")
    assert "unit_flag" not in {
        t.name for t in space_for(FA.kernel("fwd"), plain.launch_options).tunables
    }
    # The default config leaves each option at what the compiler does without it (per soc).
    default = fwd.complete(FA.kernel("fwd").default(FA.case("b1024_n256_d128_t128_bf16")))
    assert default["set_workspace_multibuffer"] == 4 and default["unit_flag"] is False
    on_950 = soc_profile("950PR", npu_options=("set_workspace_multibuffer",))
    assert on_950.option_defaults["set_workspace_multibuffer"] == 2


def test_an_option_the_compiler_does_not_read_there_is_held_at_its_default():
    """set_workspace_multibuffer is read only where multibuffer is not limited to local buffers:
    the space holds no config that would compile like another."""
    names = ("limit_auto_multi_buffer_only_for_local_buffer", "set_workspace_multibuffer")
    profile = soc_profile("910B", npu_options=names)
    space = space_for(FA.kernel("fwd"), profile.launch_options, profile.option_defaults)
    configs = list(space.configs())
    only_local = [c for c in configs if c[names[0]]]
    assert only_local and {c[names[1]] for c in only_local} == {4}
    assert {c[names[1]] for c in configs if not c[names[0]]} == {2, 4}
    assert len(configs) == 16 * 2 * 3


def test_options_left_out_on_a_950_say_why_and_unknown_ones_are_one_line():
    report = describe("jagged_dense_flash_attention", "fwd", "b1024_n256_d128_t128_bf16", "950PR")
    states = {o["name"]: (o["state"], o["why"]) for o in report["options"]}
    assert states["tile_mix_vector_loop"][0] == "left out"
    assert "bishengir-compile-a5" in states["tile_mix_vector_loop"][1]
    assert states["sync_solver"][0] == "left out" and "950 compile path" in states["sync_solver"][1]
    assert states["unit_flag"] == ("not searched", "")
    assert all(o["source"].startswith("NPUOptions.") for o in report["options"])
    with pytest.raises(UserError, match="cannot be searched on the 950PR: bishengir-compile-a5"):
        soc_profile("950PR", npu_options=("tile_mix_cube_loop",))
    with pytest.raises(
        UserError, match="unknown --npu-options value 'tile_mix'; use all or any of"
    ):
        soc_profile("910B", npu_options=("tile_mix",))
    with pytest.raises(UserError, match="--npu-options is for an Ascend soc, not 'H200'"):
        soc_profile("H200", npu_options=("unit_flag",))
    assert (
        describe("jagged_dense_flash_attention", "fwd", "b1024_n256_d128_t128_bf16", "H200")[
            "options"
        ]
        == []
    )


def test_warm_starts_carry_over_between_spaces_that_differ_only_by_options():
    from autotuner.search import warm_starts

    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    kernel = FA.kernel("fwd")
    plain, knobs = soc_profile("910B"), soc_profile("910B", npu_options=("unit_flag",))
    small = space_for(kernel, plain.launch_options, plain.option_defaults)
    large = space_for(kernel, knobs.launch_options, knobs.option_defaults)
    here = (case.name, case.shape, case.dtype, "910B")
    tiles = {"BLOCK_T": 64, "BLOCK_L": 64, "multibuffer": True}
    sibling = warm_starts.Sibling("other", case.shape, case.dtype, "910B", tiles)
    into_large = warm_starts.choose(
        large, list(large.configs()), large.complete(kernel.default(case)), 48, here, [sibling]
    )
    assert into_large == [{**tiles, "unit_flag": False}]
    tuned = warm_starts.Sibling(
        "other", case.shape, case.dtype, "910B", {**tiles, "unit_flag": True}
    )
    into_small = warm_starts.choose(
        small, list(small.configs()), small.complete(kernel.default(case)), 48, here, [tuned]
    )
    assert into_small == [tiles]
