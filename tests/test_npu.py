"""The Ascend backend without an NPU: soc mapping, the code path a device takes (torch_npu and
`torch.npu` stood in for at their boundary only), what `status` reports of the memory model
(tests/test_npu_memory.py), and asking for an NPU this machine does not have. Search spaces per
soc and `autotune space`: tests/test_npu_spaces.py."""

import importlib.machinery
import importlib.util
import os
import re
import sys
import types
import warnings

import optuna
import pytest
import torch
from optuna.trial import TrialState, create_trial

from autotuner.backends import found_devices, get_backend, triton_ascend
from autotuner.backends import npu as npu_module
from autotuner.backends.base import Timing
from autotuner.backends.compile import bishengir_version
from autotuner.backends.npu import (
    NpuBackend,
    cann_version,
    npu_soc,
)
from autotuner.backends.triton_ascend import TritonAscend, compiles_on_910_95
from autotuner.report.studies import summarize
from core.errors import UserError
from core.limits import DeviceLimits
from core.socs import soc_from_device_name
from storage import StudyRecord, open_database, optuna_storage

from .conftest import KIB, autotune_cli

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
        on_950 = any(compiles_on_910_95(soc_from_device_name(name)) for name in names)
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
        register_file_bytes=128 * KIB,
        crashing_dot_row_bytes=32,
    )
    assert backend.launch_options == {"multibuffer"}  # SIMD: num_warps does nothing
    assert backend.option_defaults["multibuffer"] is False  # the compiler's default on a 950
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
    assert backend.option_defaults["multibuffer"] is True
    with pytest.raises(UserError, match="soc '950PR' needs an Ascend NPU; this machine has: ") as e:
        get_backend("950PR")
    assert "Ascend910B2 (soc 910B), Ascend910_9391 (soc 910_93)" in str(e.value)


def test_an_unknown_ascend_device_runs_without_a_unified_buffer_check(monkeypatch):
    install(monkeypatch, ["Ascend310P3"])
    with pytest.warns(UserWarning, match="Ascend310P3"):
        backend = get_backend("Ascend310P3")
    assert backend.soc == "Ascend310P3" and backend.limits.unified_buffer_bytes is None
    assert backend.launch_options == {"multibuffer"}


def test_a_950_is_refused_by_a_triton_ascend_that_cannot_run_on_it(monkeypatch):
    """triton-ascend 3.2.0 hard-codes compile_on_910_95 = False (ascend/backend/compiler.py) and
    its runtime is not known to launch on a 950; it compiles for one (`space --compile`)."""
    pypi = TritonAscend("3.2.0", targets_950=False, multibuffer=True, has_compile_mode=True)
    install(monkeypatch, ["Ascend950PR_9599"], compiler=pypi)
    with pytest.raises(UserError) as refused:
        get_backend("950PR")
    message = str(refused.value)
    assert message.startswith("triton-ascend 3.2.0 does not run on the 950PR: it detects no 950 ")
    assert "space --compile" in message and "\n" not in message
    assert "running on it needs triton-ascend's 3.5 line" in message


def test_a_910b_with_the_pypi_triton_ascend_runs_and_no_triton_ascend_is_named(monkeypatch):
    pypi = TritonAscend("3.2.0", targets_950=False, multibuffer=True, has_compile_mode=True)
    install(monkeypatch, ["Ascend910B2"], compiler=pypi)
    assert get_backend("910B").option_defaults["multibuffer"] is True
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
        "bishengir": bishengir_version("950PR"),  # "none" where ascendnpu-ir is not installed
    }


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

    result = autotune_cli("status", "--db", url)
    assert result.returncode == 0, result.stderr
    rows = {cells[2]: cells for cells in table_rows(result.stdout)}  # by the soc column
    assert rows["soc"][-1] == "UB misses"
    assert rows["910B"][-1] == "2" and rows["H200"][-1] == "-"

    only_gpu = autotune_cli("status", "--db", url, "--soc", "H200")
    assert only_gpu.returncode == 0 and "UB misses" not in only_gpu.stdout


def table_rows(text: str) -> list[list[str]]:
    """The cells of each line of a printed table that has cells."""
    rows = [[c.strip() for c in re.split(r"[│┃]", line)[1:-1]] for line in text.splitlines()]
    return [row for row in rows if len(row) > 2]


# -- asking for an NPU here ----------------------------------------------------------------------


@pytest.mark.skipif(
    importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is installed here"
)
def test_run_on_a_950pr_without_one_is_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "x.db"
    result = autotune_cli(
        "run", "--op", "jagged_to_padded_dense", "--soc", "950PR", "--db", f"sqlite:///{path}"
    )
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("error: soc '950PR' needs an Ascend NPU; this machine has: ")
    assert "no Ascend NPU (torch_npu not installed)" in lines[0]
    assert not path.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.skipif(
    importlib.util.find_spec("torch_npu") is not None, reason="torch_npu is installed here"
)
def test_run_with_a_bad_npu_mode_is_one_line_and_writes_nothing(tmp_path):
    path = tmp_path / "x.db"
    for soc, mode, message in [
        ("950PR", "mimd", "error: unknown --npu-mode 'mimd'; use one of simd, simt"),
        ("cpu", "simt", "error: --npu-mode simt is for an Ascend soc, not 'cpu'"),
    ]:
        result = autotune_cli(
            "run", "--op", "jagged_to_padded_dense", "--soc", soc, "--npu-mode", mode,
            "--db", f"sqlite:///{path}",
        )  # fmt: skip
        assert result.returncode == 2 and result.stderr.strip() == message
    assert list(tmp_path.iterdir()) == []
