import pytest
import torch

from autotuner.backends import TIMERS, BackendSpec, get_backend, open_backend, spec_here
from autotuner.backends.base import Timing, quantile
from core.errors import UserError
from core.socs import BackendKind, soc_from_device_name
from ops.ports import load_port

NAMES = {
    "NVIDIA H200": "H200",
    "NVIDIA H100 80GB HBM3": "H100",
    "NVIDIA A100-SXM4-80GB": "A100",
    "NVIDIA GH200 480GB": "GH200",
    "NVIDIA L40S": "L40S",
    "NVIDIA L4": "L4",
    "NVIDIA GeForce RTX 4090": "RTX4090",
    "Ascend950PR_9599": "950PR",
    "Ascend950DT_9591": "950DT",
    "Ascend910B2": "910B",
    "Ascend910B4": "910B",
    "Ascend910_9391": "910_93",
    "Ascend910_9382": "910_93",
    "Ascend310P3": "Ascend310P3",
}


@pytest.mark.parametrize(("name", "soc"), NAMES.items())
def test_soc_from_device_name(name, soc):
    assert soc_from_device_name(name) == soc


@pytest.mark.parametrize(
    "op", ["jagged_dense_flash_attention", "jagged_to_padded_dense", "dense_to_jagged"]
)
def test_generated_soc_mapping_matches_the_package(op, monkeypatch, cpu):
    """The port files carry their own copy of the mapping (they must run without autotune)."""
    port = load_port(op)
    for name, soc in NAMES.items():
        monkeypatch.setattr(torch.cuda, "get_device_name", lambda device, name=name: name)
        assert port._soc_of(torch.device("cuda", 0)) == soc
    assert port._soc_of(torch.device("cpu")) == "cpu"


def test_cpu_backend(cpu):
    assert cpu.soc == "cpu" and cpu.is_interpreter
    calls = []
    timing = cpu.time(lambda: calls.append(1))
    assert timing.n >= 3 and len(calls) >= timing.n + 1
    assert timing.p20_ms <= timing.median_ms <= timing.p80_ms


@pytest.mark.parametrize(
    ("soc", "message"),
    [
        ("foo", "unknown soc 'foo'; known socs: cpu, 950PR"),
        ("950PR", "soc '950PR' needs an Ascend NPU; this machine has: "),
        ("H200", "soc 'H200' is not on this machine; found: "),
    ],
)
def test_missing_or_unknown_soc_is_one_clear_error(soc, message):
    if soc == "H200" and torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(UserError) as info:
        get_backend(soc)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


def test_quantiles_and_spread():
    values = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert quantile(values, 0.5) == 3.0
    assert quantile(values, 0.2) == pytest.approx(1.8)
    assert quantile(values, 0.8) == pytest.approx(4.2)
    assert Timing(2.0, 1.0, 3.0, 5).spread == pytest.approx(1.0)


def test_timers_are_registered_by_name_and_checked_against_the_backend_kind():
    assert set(TIMERS) >= {"host", "cuda-events", "npu-events"}
    spec = spec_here("cpu")
    assert spec == BackendSpec(BackendKind.CPU, "cpu", "host")
    assert spec_here("cpu", timer="host") == spec
    assert isinstance(open_backend(spec).timer, TIMERS["host"])
    with pytest.raises(UserError, match=r"^unknown --timer 'sundial'; use one of host, "):
        spec_here("cpu", timer="sundial")
    with pytest.raises(UserError, match=r"^--timer npu-events cannot time soc 'H200'; use one of"):
        BackendSpec.make(BackendKind.CUDA, "H200", timer="npu-events")
    assert BackendSpec.make(BackendKind.NPU, "910B").timer == "npu-events"


def test_device_events_time_each_call_between_its_own_events():
    """`DeviceEvents` (CUDA's and the NPU's timer): per call, flush, cover the launch, start,
    call, end; one synchronisation, then each end's time since its start."""
    from autotuner.backends.base import DeviceEvents

    log: list[str] = []

    class Event:
        def record(self):
            self.at = len(log)
            log.append("record")

        def elapsed_time(self, end):
            return float(end.at - self.at)

    class Device:
        def flush_l2(self):
            log.append("flush")

        def synchronize(self):
            log.append("sync")

    class Events(DeviceEvents):
        name, kinds = "test-events", frozenset()

        def event(self):
            return Event()

        def cover_launch(self):
            log.append("cover")

        def describe(self, backend):
            return "test"

    times = Events().elapsed_ms(Device(), lambda: log.append("call"), 3)
    assert log == ["flush", "cover", "record", "call", "record"] * 3 + ["sync"]
    assert times == [2.0, 2.0, 2.0]
