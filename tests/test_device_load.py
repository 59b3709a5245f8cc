"""What the device says of other work: NVML's processes read through a stand-in `pynvml` (no GPU
here), and the calibration probes' judgement on given times."""

import os
import sys
import types

import pytest
import torch

from autotuner.backends import nvml
from autotuner.measure.device_load import judge

PROBES = {"mm512": 0.01, "mm1024": 0.04, "mm2048": 0.3, "mm4096": 2.3}


def fake_pynvml(listed, computed=None):
    """A `pynvml` whose device lists the pids `listed` and whose utilisation samples show
    `computed` (pids with SM use); None: the device keeps no samples."""

    class NVMLError(Exception):
        pass

    def samples(handle, since):
        if computed is None:
            raise NVMLError("not supported")
        return [types.SimpleNamespace(pid=p, smUtil=50) for p in computed]

    return types.SimpleNamespace(
        NVMLError=NVMLError,
        nvmlInit=lambda: None,
        nvmlDeviceGetHandleByIndex=lambda index: "handle",
        nvmlDeviceGetComputeRunningProcesses=lambda h: [
            types.SimpleNamespace(pid=p) for p in listed
        ],
        nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=87),
        nvmlDeviceGetProcessUtilization=samples,
    )


@pytest.fixture
def no_uuid(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: object())


@pytest.mark.parametrize(
    ("listed", "computed", "others"),
    [
        ([os.getpid()], [os.getpid()], 0),  # alone
        ([os.getpid(), 4242], [os.getpid(), 4242], 1),  # our pid visible, another computing
        ([os.getpid(), 4242], [os.getpid()], 0),  # another holds a context but computes nothing
        ([900001, 900002], [900001, 900002], 1),  # a container: host pids, ours among them
        ([os.getpid(), 4242], None, 1),  # no utilisation samples: every listed process counts
    ],
)
def test_nvml_counts_the_other_processes_that_compute(
    monkeypatch, no_uuid, listed, computed, others
):
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(listed, computed))
    seen = nvml.activity(torch.device("cuda", 0), since=0.0)
    assert seen["other_processes"] == others
    assert seen["listed"] == len(listed) and seen["utilization_percent"] == 87


def test_without_pynvml_the_device_says_nothing(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert nvml.activity(torch.device("cuda", 0), since=0.0) is None


def test_the_probe_nearest_each_duration_judges_it():
    moved = {**PROBES, "mm4096": 2.3 * 1.5}  # a load that slows only long kernels
    short = judge([0.25, 0.4], PROBES, moved, None, None, noise=0.03)
    assert short.why is None and short.movement == pytest.approx(0.0)
    long = judge([3.0], PROBES, moved, None, None, noise=0.03)
    assert long.why == "calibration mm4096 (2.3 ms) moved +50.0% during the measurement"
    since = judge([3.0], moved, moved, PROBES, None, noise=0.03)
    assert since.why == "calibration mm4096 (2.3 ms) moved +50.0% since baseline"
    assert since.record["calibration"]["before"] == moved
