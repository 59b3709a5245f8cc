"""The Ascend backend without an NPU: soc mapping, the code path a device takes (torch_npu and
`torch.npu` stood in for at their boundary only), search spaces per soc, the unified-buffer model
and what `status` reports of it, and asking for an NPU this machine does not have."""

import importlib.machinery
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import types
import warnings

import optuna
import pytest
import torch
from optuna.distributions import CategoricalDistribution
from optuna.trial import TrialState, create_trial

from autotuner.backends import found_devices, get_backend, triton_ascend
from autotuner.backends import npu as npu_module
from autotuner.backends.base import Timing
from autotuner.backends.cuda import CudaBackend
from autotuner.backends.npu import (
    NpuBackend,
    cann_version,
    npu_launch_options,
    npu_limits,
    npu_option_defaults,
    npu_soc,
)
from autotuner.backends.socs import soc_from_device_name
from autotuner.backends.triton_ascend import FAMILY_950, TritonAscend
from autotuner.report.studies import summarize
from autotuner.search.settle import retime_candidates
from autotuner.search.space import config_key, space_for
from autotuner.search.study import Plan, optuna_storage
from autotuner.search.trial import classify, short
from core.errors import UserError
from core.limits import DeviceLimits
from ops import all_ops, get_op
from ops.spec import cube_bytes
from storage import StudyRecord, open_database

from .conftest import ROOT

FA = get_op("jagged_dense_flash_attention")
COPY = get_op("jagged_to_padded_dense")
KIB = 1024


# -- soc mapping -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "soc"),
    [
        ("Ascend950PR_9599", "950PR"),
        ("Ascend950DT_9591", "950DT"),
        ("Ascend910B2", "910B"),
        ("Ascend910B4", "910B"),
        ("Ascend910_9391", "910_93"),
        ("Ascend910_9382", "910_93"),
        # The 950 family's older names (NPUTargetSpec.td lists Ascend950PR_9599 and
        # Ascend950DT_9581 beside them).
        ("Ascend910_9599", "950PR"),
        ("Ascend910_958b", "950PR"),
        ("Ascend910_9581", "950DT"),
    ],
)
def test_known_ascend_names_map_to_their_soc(name, soc):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert npu_soc(name) == soc


def test_an_unknown_ascend_name_is_kept_verbatim_with_a_warning():
    with pytest.warns(UserWarning, match="unknown Ascend device 'Ascend310P3'"):
        assert npu_soc("Ascend310P3") == "Ascend310P3"


# -- the device path, with torch_npu and torch.npu stood in for ---------------------------------


class FakeNpu:
    """The part of `torch.npu` the backend calls; the device's clock advances only in `work`."""

    def __init__(self, names: list[str], **properties: int) -> None:
        self.names = names
        self.properties = properties
        self.clock_ms = 0.0
        self.synchronized = 0
        npu = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                assert enable_timing
                self.at: float | None = None

            def record(self) -> None:
                self.at = npu.clock_ms

            def elapsed_time(self, end: "Event") -> float:
                return end.at - self.at

        self.Event = Event

    def work(self, ms: float) -> None:
        self.clock_ms += ms

    def is_available(self) -> bool:
        return bool(self.names)

    def device_count(self) -> int:
        return len(self.names)

    def get_device_name(self, index: int) -> str:
        return self.names[index]

    def get_device_properties(self, index: int) -> types.SimpleNamespace:
        return types.SimpleNamespace(name=self.names[index], **self.properties)

    def synchronize(self, device: int | None = None) -> None:
        self.synchronized += 1


def install(
    monkeypatch, names: list[str], compiler: TritonAscend | None = None, **properties: int
) -> FakeNpu:
    """A torch_npu module and a `torch.npu` namespace; the NPU's tensors live on the CPU. The
    installed triton-ascend is `compiler`, by default one that builds for these devices."""
    fake = FakeNpu(names, **properties)
    if compiler is None:
        on_950 = any(soc_from_device_name(name) in FAMILY_950 for name in names)
        compiler = TritonAscend("3.5.0", on_950, not on_950, True)
    monkeypatch.setattr(triton_ascend, "installed", lambda: compiler)
    module = types.ModuleType("torch_npu")
    module.__spec__ = importlib.machinery.ModuleSpec("torch_npu", None)
    module.__version__ = "2.6.0.post3"
    monkeypatch.setitem(sys.modules, "torch_npu", module)
    monkeypatch.setattr(torch, "npu", fake, raising=False)
    monkeypatch.setattr(NpuBackend, "device_type", "cpu")
    monkeypatch.setattr(npu_module, "_FLUSH_BYTES", 1 << 20)
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # restored after the test
    return fake


@pytest.fixture
def npu950(monkeypatch):
    return install(monkeypatch, ["Ascend950PR_9599"], cube_core_num=32, vector_core_num=64)


def test_a_950pr_is_found_and_described(npu950):
    backend = get_backend("950PR")
    assert isinstance(backend, NpuBackend) and backend.kind == "npu"
    assert backend.soc == "950PR" and backend.device_name == "Ascend950PR_9599"
    assert backend.limits == DeviceLimits(
        unified_buffer_bytes=248 * KIB,
        l1_bytes=512 * KIB,
        l0c_bytes=256 * KIB,
        max_total_blocks=65535,
        cores=32,
        vector_cores=64,
    )
    assert backend.launch_options == {"multibuffer"}  # SIMD: num_warps does nothing
    assert backend.option_defaults == {"multibuffer": False}  # the compiler's default on a 950
    assert backend.device == torch.device("cpu", 0)
    assert os.environ["TRITON_INTERPRET"] == "0"  # compiled kernels, as on a GPU
    assert isinstance(get_backend(), NpuBackend)  # the accelerator found, when none is named
    assert "Ascend950PR_9599 (soc 950PR)" in found_devices()


def test_a_short_part_is_cross_checked_with_the_profiler(npu950, monkeypatch):
    """Parts under 0.3 ms are also timed by triton-ascend's profiler method (do_bench_npu, us)."""
    import triton.testing

    backend = get_backend("950PR")
    asked = []

    def do_bench_npu(fn, warmup, active):
        asked.append((warmup, active))
        fn()
        return 80.0  # us

    monkeypatch.setattr(triton.testing, "do_bench_npu", do_bench_npu, raising=False)
    kernel = lambda: npu950.work(0.1)  # noqa: E731
    short = backend.time(kernel)
    assert backend.cross_check(kernel, short) == {
        "profiler_ms": 0.08, "events_over_profiler": pytest.approx(1.25),
    }  # fmt: skip
    assert asked == [(5, 30)]
    assert backend.cross_check(kernel, Timing(0.5, 0.5, 0.5, 10)) == {}  # long: events suffice
    monkeypatch.setattr(triton.testing, "do_bench_npu", lambda fn, warmup, active: float("inf"))
    assert backend.cross_check(kernel, short) == {
        "profiler_check": "the profiler wrote no kernel time"
    }
    monkeypatch.delattr(triton.testing, "do_bench_npu")
    assert "no do_bench_npu" in backend.cross_check(kernel, short)["profiler_check"]
    assert get_backend("cpu").cross_check(kernel, short) == {}  # other backends: none


def test_timing_comes_from_the_npu_events_with_the_cache_flushed(npu950):
    backend = get_backend("950PR")
    calls = []

    def kernel():
        calls.append(1)
        npu950.work(2.5)

    timing = backend.time(kernel)
    assert timing.median_ms == timing.p20_ms == timing.p80_ms == 2.5
    assert timing.n >= 10 and len(calls) > timing.n
    assert npu950.synchronized > 0
    assert backend._flush_buffer is not None and backend._flush_buffer.device.type == "cpu"
    assert backend.samples(kernel, 5) == [2.5] * 5


def test_devices_of_several_socs_and_missing_core_counts(monkeypatch):
    install(monkeypatch, ["Ascend910B2", "Ascend910_9391"])
    backend = get_backend("910_93")
    assert backend.index == 1 and backend.soc == "910_93"
    assert backend.limits.cores is None and backend.limits.vector_cores is None
    assert backend.limits.unified_buffer_bytes == 192 * KIB
    assert backend.limits.l0c_bytes == 128 * KIB
    assert backend.launch_options == {"multibuffer"}
    assert backend.option_defaults == {"multibuffer": True}
    with pytest.raises(UserError, match="soc '950PR' needs an Ascend NPU; this machine has: ") as e:
        get_backend("950PR")
    assert "Ascend910B2 (soc 910B), Ascend910_9391 (soc 910_93)" in str(e.value)


def test_an_unknown_ascend_device_runs_without_a_unified_buffer_check(monkeypatch):
    install(monkeypatch, ["Ascend310P3"])
    with pytest.warns(UserWarning, match="Ascend310P3"):
        backend = get_backend("Ascend310P3")
    assert backend.soc == "Ascend310P3" and backend.limits.unified_buffer_bytes is None
    assert backend.launch_options == {"multibuffer"}


def test_a_950_is_refused_by_a_triton_ascend_that_cannot_build_for_it(monkeypatch):
    """triton-ascend 3.2.0 hard-codes compile_on_910_95 = False (ascend/backend/compiler.py)."""
    pypi = TritonAscend("3.2.0", targets_950=False, multibuffer=True, has_compile_mode=True)
    install(monkeypatch, ["Ascend950PR_9599"], compiler=pypi)
    with pytest.raises(UserError) as refused:
        get_backend("950PR")
    message = str(refused.value)
    assert message.startswith("triton-ascend 3.2.0 cannot compile for the 950PR: it builds for ")
    assert "the 950 needs triton-ascend's 3.5 line" in message and "\n" not in message


def test_a_910b_with_the_pypi_triton_ascend_runs_and_no_triton_ascend_is_named(monkeypatch):
    pypi = TritonAscend("3.2.0", targets_950=False, multibuffer=True, has_compile_mode=True)
    install(monkeypatch, ["Ascend910B2"], compiler=pypi)
    assert get_backend("910B").option_defaults == {"multibuffer": True}
    monkeypatch.setattr(triton_ascend, "installed", lambda: None)
    with pytest.raises(UserError, match=r"triton-ascend is not installed \(pip install"):
        get_backend("910B")


def test_simt_mode_on_a_950_compiles_simt_only_with_warps(npu950):
    backend = get_backend("950PR", "simt")
    assert backend.launch_options == {"num_warps", "compile_mode"}
    assert backend.limits.unified_buffer_bytes == 216 * KIB and backend.limits.l0c_bytes is None
    assert backend.versions()["npu_mode"] == "simt"
    with pytest.raises(UserError, match="--npu-mode simt is for an Ascend soc, not 'cpu'"):
        get_backend("cpu", "simt")


def test_the_flush_is_twice_the_l2_the_device_reports(monkeypatch):
    install(monkeypatch, ["Ascend910B2"], L2_cache_size=192 * 1024 * 1024)
    backend = get_backend("910B")
    assert backend.flush_bytes == 384 * 1024 * 1024
    assert backend.versions()["timer"] == "npu events, 384 MiB zeroed before each repetition"


def test_a_torch_npu_that_does_not_import_is_named(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: object() if name == "torch_npu" else real(name, *args),
    )
    monkeypatch.setitem(sys.modules, "torch_npu", None)  # `import torch_npu` raises ImportError
    assert not NpuBackend.available()
    assert "no Ascend NPU (torch_npu does not import (ModuleNotFoundError: " in found_devices()
    with pytest.raises(UserError, match="no Ascend NPU to use: torch_npu does not import"):
        NpuBackend()


def test_versions_name_the_stack(npu950, monkeypatch, tmp_path):
    import platform

    import triton

    monkeypatch.delenv("ASCEND_HOME_PATH", raising=False)
    monkeypatch.delenv("ASCEND_TOOLKIT_HOME", raising=False)
    assert cann_version() == "unknown"
    info = tmp_path / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir()
    info.write_text("package_name=Ascend-cann-toolkit\nversion=8.1.RC1\narch=x86_64\n")
    monkeypatch.setenv("ASCEND_TOOLKIT_HOME", str(tmp_path))
    assert get_backend("950PR").versions() == {
        "torch": torch.__version__,
        "torch_npu": "2.6.0.post3",
        "triton": triton.__version__,
        "cann": "8.1.RC1",
        "device": "Ascend950PR_9599",
        "npu_mode": "simd",
        "timer": "npu events, 1 MiB zeroed before each repetition",
    }


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
        unified_buffer_bytes=216 * KIB, max_total_blocks=65535
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
        plan = Plan.make(
            FA, FA.kernel("fwd"), case, soc, npu_launch_options(), npu_limits(soc), 48,
            npu_option_defaults(soc),
        )  # fmt: skip
        assert plan.default == default and plan.default in plan.feasible
        assert plan.default_violation is None


# -- the unified-buffer model --------------------------------------------------------------------


def test_attention_forward_tile_bytes_by_hand():
    fwd = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")  # D=128 -> BLOCK_D=128, bf16
    # BLOCK_T=64, BLOCK_L=32. bf16 tiles: k [128, 64] 16384 B, q [32, 128] 8192 B,
    # v [32, 128] 8192 B, bias [32, 64] 4096 B = 36864 B. fp32: s/p [32, 64] 8192 B,
    # acc [64, 128] 32768 B, m_i and l_i [64] 2 * 256 B = 41472 B. In all 78336 B.
    assert fwd.tile_bytes({"BLOCK_T": 64, "BLOCK_L": 32}, case) == 78336
    # BLOCK_T=128, BLOCK_L=32. bf16: k 32768 + q 8192 + v 8192 + bias 8192 = 57344 B;
    # fp32: s/p 16384 + acc 65536 + m_i, l_i 1024 = 82944 B. In all 140288 B.
    assert fwd.tile_bytes({"BLOCK_T": 128, "BLOCK_L": 32}, case) == 140288


def test_attention_dk_tile_bytes_by_hand():
    dk = FA.kernel("bwd_dk")
    case = FA.case("b2048_n512_d256_t32_bf16", "performance")  # BLOCK_D=256, bf16
    # BLOCK_T=32, BLOCK_L=32. bf16: k [256, 32] 16384 B, do [32, 256] 16384 B, q [32, 256]
    # 16384 B, v [32, 256] 16384 B, bias [32, 32] 2048 B = 67584 B. fp32: lse and delta [32]
    # 256 B, dk [256, 32] 32768 B, s/p [32, 32] 4096 B, dp/ds [32, 32] 4096 B = 41216 B.
    assert dk.tile_bytes({"BLOCK_T": 32, "BLOCK_L": 32}, case) == 108800
    # BLOCK_L=16 halves q, v, bias, s/p and dp/ds: bf16 50176 B + fp32 37120 B.
    assert dk.tile_bytes({"BLOCK_T": 32, "BLOCK_L": 16}, case) == 87296


def test_jagged_to_padded_dense_tile_bytes_by_hand():
    kernel = COPY.kernel("fwd")
    # The one tile is x [BLOCK_ROW, BLOCK_COL] in the values' dtype.
    fp32 = COPY.case("b1024_n1024_d128_fp32", "performance")
    assert kernel.tile_bytes({"BLOCK_ROW": 128, "BLOCK_COL": 128}, fp32) == 128 * 128 * 4
    fp16 = COPY.case("b2048_n256_d64_fp16", "performance")
    assert kernel.tile_bytes({"BLOCK_ROW": 32, "BLOCK_COL": 32}, fp16) == 2048


def plan_on(soc: str, spec, kernel: str, case: str) -> Plan:
    return Plan.make(
        spec,
        spec.kernel(kernel),
        spec.case(case, "performance"),
        soc,
        npu_launch_options(),
        npu_limits(soc),
        48,
        npu_option_defaults(soc),
    )


def plan_910b(spec, kernel: str, case: str) -> Plan:
    return plan_on("910B", spec, kernel, case)


def test_multibuffer_doubles_only_the_tiles_streamed_in_the_loop():
    fwd = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    config = {"BLOCK_T": 128, "BLOCK_L": 32}
    # In the loop: q [32, 128], v [32, 128] and bias [32, 128], bf16: 24576 B; k, acc, m_i and
    # l_i stay. 140288 + 24576 = 164864 B, not 2 * 140288 = 280576 B.
    assert fwd.stream_bytes(config, case) == 24576
    limits = DeviceLimits(unified_buffer_bytes=164864)
    assert fwd.violation({**config, "multibuffer": True}, case, limits) is None
    assert fwd.violation(
        {**config, "multibuffer": True}, case, DeviceLimits(unified_buffer_bytes=164863)
    ) == ("tiles need 164864 B of unified buffer, over 164863 B")
    # A kernel without a loop has nothing to double.
    copy = get_op("jagged2_to_padded_dense").kernel("fwd")
    small = get_op("jagged2_to_padded_dense").case("b1024_n256_fp32", "performance")
    blocks = {"BLOCK_M": 64, "BLOCK_N": 64}
    need = copy.tile_bytes(blocks, small)
    tight = DeviceLimits(unified_buffer_bytes=need)
    assert copy.violation({**blocks, "multibuffer": True}, small, tight) is None


def test_the_attention_forward_of_the_issue_fits_a_950pr_multibuffered():
    """BLOCK_T=128, BLOCK_L=32 with multibuffer on a bf16 D=128 case: 164864 B of UB (248 KiB
    there); L1: k 32768 B once, q, p, v 8192 B each twice: 81920 B; L0C: the larger result,
    pv [128, 128] fp32, twice: 131072 B (256 KiB there)."""
    plan = plan_on("950PR", FA, "fwd", "b1024_n256_d128_t128_bf16")
    config = {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True}
    assert config in plan.feasible
    dots = FA.kernel("fwd").dots(config, plan.case)
    assert cube_bytes(dots, True) == (81920, 131072)
    assert cube_bytes(dots, False) == (32768 + 3 * 8192, 65536)


def test_910b_rejects_tiles_over_its_unified_buffer_with_the_reason():
    assert npu_limits("910B") == DeviceLimits(
        unified_buffer_bytes=192 * KIB,
        l1_bytes=512 * KIB,
        l0c_bytes=128 * KIB,
        max_total_blocks=65535,
    )
    plan = plan_910b(FA, "fwd", "b1024_n256_d128_t128_bf16")
    assert {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True} in plan.feasible  # 164864 B
    wide = {"BLOCK_T": 128, "BLOCK_L": 64, "multibuffer": True}
    assert plan.rejected[config_key(wide)] == (
        "tiles need 230400 B of unified buffer, over 196608 B"
    )
    assert {**wide, "multibuffer": False} in plan.feasible  # 181248 B
    kernel, case = plan.kernel, plan.case
    for config in plan.space.configs():
        streamed = kernel.stream_bytes(config, case) if config["multibuffer"] else 0
        over = kernel.tile_bytes(config, case) + streamed > 192 * KIB
        assert over == (config_key(config) in plan.rejected), config


def test_the_l0c_check_rejects_dot_results_over_it_with_the_reason():
    """The forward's pv [BLOCK_T, BLOCK_D] fp32 result on a D=256 case, BLOCK_T=128: 131072 B,
    doubled by multibuffer 262144 B: over the 910B's 128 KiB of L0C, not over the 950's 256 KiB."""
    fwd = FA.kernel("fwd")
    case = FA.case("b2048_n512_d256_t32_bf16", "performance")
    config = {"BLOCK_T": 128, "BLOCK_L": 16, "multibuffer": True}
    l0c = {soc: DeviceLimits(l0c_bytes=npu_limits(soc).l0c_bytes) for soc in ("910B", "950PR")}
    assert fwd.violation(config, case, l0c["910B"]) == (
        "dot results need 262144 B of L0C, over 131072 B"
    )
    # (BLOCK_T=128 over T=32 is rejected too, later: only the memory check is asked here.)
    assert fwd.on_chip_violation({**config, "multibuffer": False}, case, l0c["910B"]) is None
    assert fwd.on_chip_violation(config, case, l0c["950PR"]) is None


def test_the_l1_check_counts_operands_loaded_in_the_loop_twice():
    fwd = FA.kernel("fwd")
    case = FA.case("b1024_n256_d128_t128_bf16", "performance")
    config = {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True}
    assert fwd.violation(config, case, DeviceLimits(l1_bytes=81919)) == (
        "dot operands need 81920 B of L1, over 81919 B"
    )
    assert fwd.violation(config, case, DeviceLimits(l1_bytes=81920)) is None
    # Kernels without tl.dot have no L1 or L0C to check.
    assert COPY.kernel("fwd").dots is None


def test_the_cube_buffers_of_every_dot_kernel_are_modelled():
    with_dots = {
        (spec.name, kernel.name)
        for spec in all_ops().values()
        for kernel in spec.kernels
        if kernel.dots is not None
    }
    assert with_dots == {
        ("jagged_dense_flash_attention", "fwd"),
        ("jagged_dense_flash_attention", "bwd_dv_db_dq"),
        ("jagged_dense_flash_attention", "bwd_dk"),
        ("jagged_flash_attention_basic", "fwd"),
        ("jagged_flash_attention_basic", "bwd"),
        ("multi_head_jagged_flash_attention", "fwd"),
        ("multi_head_jagged_flash_attention", "bwd"),
        ("jagged_dense_bmm", "fwd"),
        ("jagged_dense_bmm", "bwd_dx"),
        ("jagged_dense_bmm", "bwd_dy"),
        ("jagged_jagged_bmm", "fwd"),
        ("jagged_jagged_bmm", "bwd_dx"),
        ("jagged_jagged_bmm", "bwd_dy"),
    }


def test_a_grid_over_65535_blocks_is_rejected():
    plan = plan_910b(COPY, "fwd", "b512_n4096_d128_bf16")  # grid (ceil(4096 / BLOCK_ROW), 512)
    config = {"BLOCK_ROW": 32, "BLOCK_COL": 64, "multibuffer": True}
    assert plan.rejected[config_key(config)] == "grid of 65536 blocks is over the limit 65535"
    assert {**config, "BLOCK_ROW": 64} in plan.feasible  # 32768 blocks
    # Smaller rows only add blocks: the space stops at 32, kept for upstream's default, which
    # is one block too many, so the launchers' default cannot launch this case on an NPU.
    assert min(c["BLOCK_ROW"] for c in plan.feasible) == 32
    assert plan.default_violation == "grid of 65536 blocks is over the limit 65535"
    assert plan.kernel.violation({**config, "BLOCK_ROW": 16}, plan.case, npu_limits("910B")) == (
        "grid of 131072 blocks is over the limit 65535"
    )


def test_a_ub_overflow_of_bishengir_is_its_own_failure_category():
    """triton-ascend 3.2 raises the compiler's CalledProcessError as is (triton-ascend issue #302):
    the words are on its stderr only. 1572864 bits are the 910B's 192 KiB."""
    stderr = (
        b'loc("kernel.ttadapter.mlir":2:3): error: ub overflow, requires 3072000 bits while '
        b"1572864 bits available!\nerror: Failed to run BiShengHIR pipeline\n"
    )
    exc = subprocess.CalledProcessError(1, ["bishengir-compile", "kernel.mlir"], b"", stderr)
    assert classify(exc) == "ub_overflow"
    assert short(exc) == (
        'CalledProcessError: loc("kernel.ttadapter.mlir":2:3): error: ub overflow, requires '
        "3072000 bits while 1572864 bits available!"
    )
    other = subprocess.CalledProcessError(1, ["bishengir-compile"], b"", b"error: unsupported op\n")
    assert classify(other) == "compile"
    assert classify(RuntimeError("MLIRCompilationError: error: ub overflow, requires")) == (
        "ub_overflow"
    )
    assert npu_limits("910B").unified_buffer_bytes == 1572864 // 8


@pytest.mark.parametrize(
    ("words", "category"),
    [
        ("cbuf overflow, requires 5242880 bits while 4194304 bits available!", "cbuf_overflow"),
        ("cc overflow, requires 2097152 bits while 1048576 bits available!", "cc_overflow"),
    ],
)
def test_l1_and_l0c_overflows_are_memory_failures_of_their_own(words, category):
    """bishengir-compile's PlanMemory words (Ascend/AscendNPU-IR, PlanMemory.cpp)."""
    stderr = f'loc("kernel.ttadapter.mlir":5:7): error: {words}\n'.encode()
    exc = subprocess.CalledProcessError(1, ["bishengir-compile", "kernel.mlir"], b"", stderr)
    assert classify(exc) == category
    assert short(exc).endswith(f"error: {words}")


#: What bishengir-compile (Ascend/AscendNPU-IR v1.2.0, RetriablePassManager.cpp) writes on stderr
#: when a config overflowed the UB with multibuffer on and fit without it.
FALLBACK = (
    "[NOTE] Ub overflow detected; automatically set enable-code-motion to false and retrying "
    "compilation.\n"
    "[NOTE] Ub overflow detected; automatically set enable-auto-multi-buffer to false and "
    "retrying compilation.\n"
    "[NOTE] Due to Ub overflow, automatically set enable-code-motion to false, set "
    "enable-auto-multi-buffer to false; compilation then succeeded.\n"
)


def test_the_multibuffer_fallback_and_the_ub_used_are_read_from_the_compilers_output():
    assert triton_ascend.multibuffer_fell_back(FALLBACK)
    code_motion_only = FALLBACK.splitlines()[0]
    assert not triton_ascend.multibuffer_fell_back(code_motion_only)
    assert triton_ascend.notes("UB size = 1343488 bits\n" + FALLBACK) == {
        "multibuffer_fallback": True,
        "required_ub_bits": 1343488,
    }
    assert triton_ascend.notes("") == {}


def fake_compiler(folder, stderr: str, stdout: str = "", code: int = 0):
    """A `bishengir-compile` that writes what the real one would and exits with `code`."""
    script = folder / "bishengir-compile"
    script.write_text(
        "#!/usr/bin/env bash\n"
        f"printf '%s' {shlex.quote(stdout)}\n"
        f"printf '%s' {shlex.quote(stderr)} >&2\n"
        f"exit {code}\n"
    )
    script.chmod(0o755)
    return script


def test_the_compiler_log_keeps_what_triton_ascend_discards(tmp_path, monkeypatch):
    """A successful compile's stderr, which triton-ascend 3.2 captures and drops, reaches the
    trial; what triton-ascend itself reads (stdout, the exit status) is unchanged."""
    fake_compiler(tmp_path, FALLBACK, "UB size = 1343488 bits\n")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ENABLE_PRINT_UB_BITS", "1")
    code = (
        "import subprocess, shutil\n"
        "from autotuner.backends.compiler_log import compiler_log\n"
        "from autotuner.backends.triton_ascend import notes\n"
        "log = compiler_log()\n"
        "assert compiler_log() is log and shutil.which('bishengir-compile') != '{real}'\n"
        "run = subprocess.run(['bishengir-compile', 'k.mlir'], capture_output=True, text=True)\n"
        "print(run.returncode, repr(run.stdout), run.stderr == {fallback!r})\n"
        "print(notes(log.since_last()), notes(log.since_last()))\n"
    ).format(real=tmp_path / "bishengir-compile", fallback=FALLBACK)
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "0 'UB size = 1343488 bits\\n' True",
        "{'multibuffer_fallback': True, 'required_ub_bits': 1343488} {}",
    ]
    failing = tmp_path / "failing"
    failing.mkdir()
    fake_compiler(failing, "error: cc overflow, requires 1 bits while 0 bits available!\n", code=1)
    monkeypatch.setenv("PATH", f"{failing}{os.pathsep}{os.environ['PATH']}")
    result = subprocess.run(
        [sys.executable, "-c", code.split("print(run")[0] + "print(run.returncode, run.stderr)"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.stdout.strip() == "1 error: cc overflow, requires 1 bits while 0 bits available!"


def test_a_trial_whose_multibuffer_fell_back_never_wins_as_multibuffered():
    default = {"BLOCK_T": 32, "BLOCK_L": 32, "multibuffer": True}
    fell_back = {"BLOCK_T": 128, "BLOCK_L": 64, "multibuffer": True}
    honest = {"BLOCK_T": 64, "BLOCK_L": 32, "multibuffer": True}
    trials = [
        create_trial(value=1.0, user_attrs={"config": fell_back, "multibuffer_fallback": True}),
        create_trial(value=1.1, user_attrs={"config": honest, "required_ub_bits": 1343488}),
        create_trial(value=1.5, user_attrs={"config": default}),
    ]
    assert [t.user_attrs["config"] for t in retime_candidates(trials, default)] == [honest]


# -- what status reports -------------------------------------------------------------------------


def add_study(db, soc: str, trials: list[tuple[str, dict]]) -> None:
    """A study of jagged_to_padded_dense on `soc` with failed trials (category, extra attrs)."""
    name = f"jagged_to_padded_dense/fwd/b2048_n256_d64_fp16/{soc}/0123456789ab"
    with db.sessions() as session:
        session.add(
            StudyRecord(
                name=name, op="jagged_to_padded_dense", kernel="fwd",
                case_name="b2048_n256_d64_fp16", case={"shape": {}, "dtype": "float16"}, soc=soc,
                source_hash="0" * 64, budget=8, default_config={"BLOCK_ROW": 32}, feasible_size=8,
                strategy="exhaustive",
            )
        )  # fmt: skip
        session.commit()
    study = optuna.create_study(study_name=name, storage=optuna_storage(db))
    study.add_trial(create_trial(value=1.0, user_attrs={"config": {"BLOCK_ROW": 32}}))
    for category, attrs in trials:
        study.add_trial(
            create_trial(state=TrialState.FAIL, user_attrs={"category": category, **attrs})
        )


def test_status_counts_the_ub_overflows_the_static_model_missed(tmp_path):
    url = f"sqlite:///{tmp_path / 'status.db'}"
    db = open_database(url)
    overflow = ("ub_overflow", {"message": "ub overflow"})
    add_study(
        db,
        "910B",
        [
            overflow,
            overflow,
            # The default, measured although the model rejects it: its overflow is no miss.
            ("ub_overflow", {"static_violation": "tiles need 217600 B of unified buffer"}),
            ("compile", {}),
            ("infeasible", {}),
        ],
    )
    add_study(db, "H200", [("compile", {})])
    by_soc = {s.soc: s for s in summarize(db)}
    assert by_soc["910B"].ub_misses == 2 and by_soc["910B"].failures["ub_overflow"] == 3
    assert by_soc["910B"].infeasible == 1 and by_soc["H200"].ub_misses == 0
    db.engine.dispose()

    result = run_cli("status", "--db", url)
    assert result.returncode == 0, result.stderr
    rows = {cells[2]: cells for cells in table_rows(result.stdout)}  # by the soc column
    assert rows["soc"][-1] == "UB misses"
    assert rows["910B"][-1] == "2" and rows["H200"][-1] == "-"

    only_gpu = run_cli("status", "--db", url, "--soc", "H200")
    assert only_gpu.returncode == 0 and "UB misses" not in only_gpu.stdout


def table_rows(text: str) -> list[list[str]]:
    """The cells of each line of a printed table that has cells."""
    rows = [[c.strip() for c in re.split(r"[│┃]", line)[1:-1]] for line in text.splitlines()]
    return [row for row in rows if len(row) > 2]


# -- asking for an NPU here ----------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "autotuner", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "250"},
        cwd=ROOT,
        timeout=300,
    )


@pytest.mark.skipif(
    importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is installed here"
)
def test_run_on_a_950pr_without_one_is_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "x.db"
    result = run_cli(
        "run", "--op", "jagged_to_padded_dense", "--soc", "950PR", "--db", f"sqlite:///{path}"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: soc '950PR' needs an Ascend NPU; this machine has: ")
    assert "no Ascend NPU (torch_npu not installed)" in lines[0]
    assert not path.exists() and list(tmp_path.iterdir()) == []


# -- `autotune space`, without the soc's device ---------------------------------------------------

ATTENTION = ("space", "--op", "jagged_dense_flash_attention", "--kernel", "fwd")
ISSUE_CASE = ("--case", "b1024_n256_d128_t128_bf16")


def space_json(*args: str) -> dict:
    result = run_cli(*ATTENTION, *ISSUE_CASE, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("soc", ["950PR", "910B"])
def test_space_json_of_the_attention_forward_has_no_warps_in_simd_mode(soc):
    report = space_json("--soc", soc)
    assert [t["name"] for t in report["tunables"]] == ["BLOCK_T", "BLOCK_L", "multibuffer"]
    configs = report["feasible"] + [r["config"] for r in report["rejected"]]
    assert len(configs) == 32 and not any("num_warps" in c for c in configs)
    assert {"BLOCK_T": 128, "BLOCK_L": 32, "multibuffer": True} in report["feasible"]
    assert all(r["reason"].startswith("tiles need ") for r in report["rejected"])
    assert {"config": {"BLOCK_T": 128, "BLOCK_L": 128, "multibuffer": True},
            "reason": f"tiles need 361472 B of unified buffer, over {npu_limits(soc).unified_buffer_bytes} B"} in report["rejected"]  # fmt: skip
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
    result = run_cli(*ATTENTION, *ISSUE_CASE, "--soc", "H200")
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
    result = run_cli(*ATTENTION, *ISSUE_CASE, *args)
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
    result = run_cli("space", *args, "--soc", "910B")
    assert result.returncode == 2 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(message), result.stderr


@pytest.mark.skipif(
    importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is installed here"
)
def test_run_with_a_bad_npu_mode_is_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "x.db"
    for soc, mode, message in [
        ("950PR", "mimd", "error: unknown --npu-mode 'mimd'; use one of simd, simt"),
        ("cpu", "simt", "error: --npu-mode simt is for an Ascend soc, not 'cpu'"),
    ]:
        result = run_cli(
            "run", "--op", "jagged_to_padded_dense", "--soc", soc, "--npu-mode", mode,
            "--db", f"sqlite:///{path}",
        )  # fmt: skip
        assert result.returncode == 2 and result.stderr.strip() == message
    assert list(tmp_path.iterdir()) == []
