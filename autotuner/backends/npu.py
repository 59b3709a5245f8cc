"""Huawei Ascend NPUs through torch_npu and triton-ascend; times with NPU events, L2 flushed.

torch_npu is imported only when an NPU is asked for: it registers the `torch.npu` namespace and
needs the CANN libraries of the host (`source .../ascend-toolkit/set_env.sh`).

Two modes, as triton-ascend compiles (see `triton_ascend`):

- `simd` (the default): the search varies `multibuffer`, never `num_warps` (SIMD code never reads
  it: every value would compile the same kernel) nor `num_stages` (not read either).
- `simt` (`--npu-mode simt`, the 950 family only): launches pass `compile_mode="simt_only"`, the
  search varies `num_warps` over triton-ascend's SIMT warp counts, and no multibuffer (SIMT
  compiles do not read it).

A soc's on-chip memory, core counts and SIMT support are its family's and its own in the soc
registry (`core.socs`). An Ascend soc missing there (an unknown device name kept verbatim) gets no
static on-chip check: its overflows show up as failures of their own category instead.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
import platform
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import torch

from core.errors import UserError
from core.limits import DeviceLimits
from core.socs import SOCS, BackendKind, soc_from_device_name, socs_of

from . import compile_verdict, npu_options, triton_ascend
from .base import Backend, DeviceEvents, Timer, Timing
from .compile import bishengir_version, prints_memory
from .compiler_log import compiler_log

NPU_MODES = ("simd", "simt")
#: The runtime refuses a launch of more blocks than this, whatever the grid's shape.
MAX_TOTAL_BLOCKS = 65535
#: Parts faster than this (ms) are timed by the profiler too (`NpuBackend.cross_check`): event
#: times of small kernels carry a host-overhead floor (issue 15's reading; not measured here).
CROSS_CHECK_BELOW_MS = 0.3
#: Zeroed between repetitions where the device does not report its L2: more than the L2 of any
#: of these socs.
_FLUSH_BYTES = 256 * 1024 * 1024
#: A warm-up long enough for the AI cores' clocks to settle before the timed repetitions.
WARMUP_MS = 200.0


def _simt_socs() -> list[str]:
    """The known socs whose vector cores run SIMT code."""
    return [
        name
        for name, soc in SOCS.items()
        if soc.family is not None and soc.family.simt_unified_buffer_bytes is not None
    ]


def check_mode(soc: str, mode: str) -> None:
    """UserError unless `mode` is an NPU mode `soc` can run."""
    if mode not in NPU_MODES:
        raise UserError(f"unknown --npu-mode {mode!r}; use one of {', '.join(NPU_MODES)}")
    if mode == "simt" and soc not in _simt_socs():
        raise UserError(
            f"--npu-mode simt needs a 950 soc ({', '.join(_simt_socs())}): only the "
            f"950's vector cores run SIMT code, not the {soc}'s"
        )


def npu_limits(soc: str, mode: str = "simd") -> DeviceLimits:
    """The static limits of a soc in a mode (core counts: the registry's, a device's own where
    it runs). SIMT code runs on the vector cores alone: no L1 or L0C of a cube core to
    check."""
    known = SOCS.get(soc)
    family = known.family if known is not None else None
    counts = {
        "cores": known.cores if known is not None else None,
        "vector_cores": known.vector_cores if known is not None else None,
    }
    if family is None:
        return DeviceLimits(max_total_blocks=MAX_TOTAL_BLOCKS, **counts)
    if mode == "simt":
        return DeviceLimits(
            unified_buffer_bytes=family.simt_unified_buffer_bytes,
            max_total_blocks=MAX_TOTAL_BLOCKS,
            **counts,
        )
    return DeviceLimits(
        **counts,
        unified_buffer_bytes=family.unified_buffer_bytes,
        register_file_bytes=family.register_file_bytes,
        crashing_dot_row_bytes=family.crashing_dot_row_bytes,
        l1_bytes=family.l1_bytes,
        l0c_bytes=family.l0c_bytes,
        max_total_blocks=MAX_TOTAL_BLOCKS,
    )


def npu_launch_options(mode: str = "simd", options: frozenset[str] = frozenset()) -> frozenset[str]:
    """The launch options worth searching in a mode (see the module's docstring): in SIMD mode
    multibuffer and the compiler `options` a search chose (`npu_options.chosen`); SIMT code
    goes through no linalg pipeline, so none of those."""
    if mode == "simt":
        return frozenset({"num_warps", "compile_mode"})
    return frozenset({"multibuffer", *options})


def npu_option_defaults(soc: str, mode: str = "simd") -> dict[str, int | str]:
    """What a launch that leaves an option out gets, where the compiler decides it."""
    if mode == "simt":
        return {}
    return npu_options.option_defaults(soc)


def npu_soc(device_name: str) -> str:
    """`Ascend950PR_9599` -> `950PR`; an unknown name is kept verbatim, with a warning."""
    soc = soc_from_device_name(device_name)
    if soc not in socs_of(BackendKind.NPU):
        warnings.warn(
            f"unknown Ascend device {device_name!r}: its soc is kept as {soc!r}, with no "
            "unified-buffer size to check tiles against",
            stacklevel=2,
        )
    return soc


def cann_version() -> str:
    """The CANN version torch_npu reports (`torch_npu.npu.utils.get_cann_version`, Ascend/pytorch
    since v7.1.0; "" before CANN 8.1.RC1), else the toolkit's install record, else "unknown"."""
    try:
        from torch_npu.npu.utils import get_cann_version

        reported = str(get_cann_version(module="CANN"))
    except Exception:  # noqa: BLE001 - an older torch_npu, or none: read the install record
        reported = ""
    if reported:
        return reported
    for variable in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        home = os.environ.get(variable)
        if not home:
            continue
        info = Path(home) / f"{platform.machine()}-linux" / "ascend_toolkit_install.info"
        if info.is_file():
            for line in info.read_text(encoding="utf-8", errors="replace").splitlines():
                key, _, value = line.partition("=")
                if key.strip() == "version" and value.strip():
                    return value.strip()
    return "unknown"


def _torch_npu_problem() -> str | None:
    """Why torch_npu cannot be used here; None once it is imported (which registers torch.npu)."""
    if importlib.util.find_spec("torch_npu") is None:
        return "torch_npu not installed"
    try:
        import torch_npu  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - e.g. CANN libraries missing: say so in one line
        lines = str(exc).strip().splitlines()
        return f"torch_npu does not import ({type(exc).__name__}: {lines[0] if lines else ''})"
    return None


def _npu() -> Any:
    """The `torch.npu` namespace torch_npu registers."""
    return torch.npu  # type: ignore[attr-defined]


class NpuEvents(DeviceEvents):
    """NPU events around each call, L2 flushed before each."""

    name: ClassVar[str] = "npu-events"
    kinds: ClassVar[frozenset[BackendKind]] = frozenset({BackendKind.NPU})

    def event(self) -> Any:
        # torch.npu has no spin kernel to cover the host's launch overhead; the flush enqueued just
        # before keeps the device busy while the host records the start event and launches.
        return _npu().Event(enable_timing=True)

    def describe(self, backend: Backend) -> str:
        assert isinstance(backend, NpuBackend), "npu events time an NPU"
        return f"npu events, {backend.flush_bytes >> 20} MiB zeroed before each repetition"


class NpuBackend(Backend):
    kind: ClassVar[BackendKind] = BackendKind.NPU
    timer: Timer = NpuEvents()
    #: torch's device type of the NPU's tensors (tests stand in "cpu").
    device_type: ClassVar[str] = "npu"

    def __init__(self, index: int = 0, mode: str = "simd", options: tuple[str, ...] = ()) -> None:
        problem = NpuBackend.unavailable()
        if problem:
            raise UserError(f"no Ascend NPU to use: {problem}")
        npu = _npu()
        self.index = index
        self.mode = mode
        self.device_name = npu.get_device_name(index)
        self.soc = npu_soc(self.device_name)
        check_mode(self.soc, mode)
        self.compiler = triton_ascend.installed()
        refusal = triton_ascend.cannot_build(self.soc, self.compiler, mode)
        if refusal:
            raise UserError(refusal)
        self.launch_options = npu_launch_options(mode, npu_options.chosen(self.soc, options))
        self.option_defaults = npu_option_defaults(self.soc, mode)
        props = npu.get_device_properties(index)
        self.limits = dataclasses.replace(
            npu_limits(self.soc, mode),
            cores=getattr(props, "cube_core_num", None),
            vector_cores=getattr(props, "vector_core_num", None),
        )
        # The compiler prints the UB a kernel allocates, where it takes the flag triton-ascend
        # passes for it; a copy of its output goes to each trial.
        self.compiler_log = compiler_log()
        if self.compiler_log and prints_memory(self.compiler_log.real):
            os.environ.setdefault("ENABLE_PRINT_UB_BITS", "1")
        l2 = getattr(props, "L2_cache_size", 0) or 0
        #: Twice the L2 the device reports (torch_npu's `L2_cache_size`), zeroed before each
        #: repetition so none of the previous one's data is still cached.
        self.flush_bytes = 2 * l2 if l2 else _FLUSH_BYTES
        self._flush_buffer: torch.Tensor | None = None

    @staticmethod
    def unavailable() -> str | None:
        """Why no NPU can be used here (torch_npu missing or broken, no device), or None."""
        problem = _torch_npu_problem()
        if problem:
            return problem
        npu = _npu()
        if not (npu.is_available() and npu.device_count() > 0):
            return "torch_npu sees no device"
        return None

    @staticmethod
    def available() -> bool:
        return NpuBackend.unavailable() is None

    @staticmethod
    def device_names() -> list[str]:
        npu = _npu()
        return [npu.get_device_name(i) for i in range(npu.device_count())]

    @classmethod
    def found_devices(cls) -> list[tuple[str, str]]:
        """(soc, device name) of each Ascend NPU torch_npu can see (imports torch_npu if
        installed)."""
        if not cls.available():
            return []
        return [(npu_soc(name), name) for name in cls.device_names()]

    @classmethod
    def open(cls, index: int, npu_mode: str, npu_options: tuple[str, ...]) -> NpuBackend:
        return cls(index, npu_mode, npu_options)

    @property
    def device(self) -> torch.device:
        return torch.device(self.device_type, self.index)

    def synchronize(self) -> None:
        _npu().synchronize(self.index)

    def free_memory(self) -> int | None:
        return _npu().mem_get_info(self.index)[0]

    def flush_l2(self) -> None:
        if self._flush_buffer is None:
            self._flush_buffer = torch.empty(self.flush_bytes, dtype=torch.int8, device=self.device)
        self._flush_buffer.zero_()

    def compiler_notes(self) -> dict[str, bool | int]:
        """What the compiler said of the kernels compiled since the last call (see
        `compile_verdict.notes`); nothing where no compiler log could be kept."""
        return compile_verdict.notes(self.compiler_log.since_last()) if self.compiler_log else {}

    def time(self, fn: Callable[[], Any], **kw: Any) -> Timing:
        kw.setdefault("warmup_ms", WARMUP_MS)
        return super().time(fn, **kw)

    def cross_check(self, fn: Callable[[], Any], timing: Timing) -> dict[str, Any]:
        """For a part under CROSS_CHECK_BELOW_MS, the installed triton-ascend's profiler timing
        (`triton.testing.do_bench_npu`, what `TRITON_BENCH_METHOD=npu` uses: the average kernel
        time from torch_npu's profiler, `op_statistic.csv`, in us; triton-ascend v3.2.0
        python/triton/testing.py): events carry a host-overhead floor there."""
        if timing.median_ms >= CROSS_CHECK_BELOW_MS:
            return {}
        try:
            from triton.testing import do_bench_npu
        except ImportError:
            return {"profiler_check": "the installed triton-ascend has no do_bench_npu"}
        average_us = float(do_bench_npu(fn, warmup=5, active=30))
        if not math.isfinite(average_us):
            return {"profiler_check": "the profiler wrote no kernel time"}
        profiler_ms = average_us / 1000
        return {"profiler_ms": profiler_ms, "events_over_profiler": timing.median_ms / profiler_ms}

    def versions(self) -> dict[str, str]:
        import torch_npu
        import triton

        return {
            "torch": torch.__version__,
            "torch_npu": str(getattr(torch_npu, "__version__", "unknown")),
            "triton": triton.__version__,  # triton-ascend installs as `triton`
            "cann": cann_version(),
            "bishengir": bishengir_version(self.soc),
            "device": self.device_name,
            "npu_mode": self.mode,
            "timer": self.timer.describe(self),
        }
