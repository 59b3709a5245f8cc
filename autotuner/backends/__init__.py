"""Backends by soc: `get_backend("cpu")`, `get_backend("H200")`, `get_backend("950PR")`, or the
device found here; `open_backend(spec)` opens what a `BackendSpec` names, in a run's parent and its
workers alike. Backend classes and timing methods are registered by kind and name (`BACKENDS`,
`TIMERS`): a new timing method is one `Timer` class and one entry."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.errors import UserError
from core.limits import DeviceLimits
from core.socs import CPU, BackendKind, check_soc, is_npu_soc

from . import npu_options as npu_options_module
from . import triton_ascend
from .base import Backend, HostClock, Timer, Timing
from .cpu import CpuBackend
from .cuda import CudaBackend, CudaEvents
from .npu import (
    NPU_MODES,
    NpuBackend,
    NpuEvents,
    check_mode,
    npu_launch_options,
    npu_limits,
    npu_option_defaults,
)

__all__ = [
    "Backend",
    "BackendSpec",
    "SocProfile",
    "Timing",
    "device_indices",
    "found_devices",
    "get_backend",
    "open_backend",
    "soc_profile",
    "spec_here",
]


#: The backend class of each kind.
BACKENDS: dict[BackendKind, type[Backend]] = {
    BackendKind.CPU: CpuBackend,
    BackendKind.CUDA: CudaBackend,
    BackendKind.NPU: NpuBackend,
}
#: The timing methods, by name (`autotune run --timer`); each backend class names its default.
TIMERS: dict[str, type[Timer]] = {timer.name: timer for timer in (HostClock, CudaEvents, NpuEvents)}
#: The kinds with devices, in the order a soc left open is looked for.
DEVICE_KINDS = (BackendKind.CUDA, BackendKind.NPU)


@dataclass(frozen=True)
class BackendSpec:
    """What opens a backend: a run's parent and its worker processes open the same one from it."""

    kind: BackendKind
    soc: str
    #: A name of `TIMERS` that times this kind.
    timer: str
    #: How an Ascend NPU compiles (`NPU_MODES`), and the compiler options its searches vary.
    npu_mode: str = "simd"
    npu_options: tuple[str, ...] = ()

    @classmethod
    def make(
        cls,
        kind: BackendKind,
        soc: str,
        npu_mode: str = "simd",
        npu_options: tuple[str, ...] = (),
        timer: str | None = None,
    ) -> BackendSpec:
        """The spec of `soc`, timed by `timer` (None: the kind's default); an unknown timer, or
        one for another kind, is a UserError."""
        name = timer or BACKENDS[kind].timer.name
        chosen = TIMERS.get(name)
        if chosen is None:
            raise UserError(f"unknown --timer {name!r}; use one of {', '.join(TIMERS)}")
        if kind not in chosen.kinds:
            fits = [n for n, t in TIMERS.items() if kind in t.kinds]
            raise UserError(f"--timer {name} cannot time soc {soc!r}; use one of {', '.join(fits)}")
        return cls(kind, soc, name, npu_mode, npu_options)


def device_indices(backend: Backend) -> list[int]:
    """Indices, as torch numbers the visible devices, of every device of `backend`'s soc here."""
    found = BACKENDS[backend.kind].found_devices()
    return [i for i, (soc, _) in enumerate(found) if soc == backend.soc]


def found_devices() -> str:
    """One phrase naming what this machine offers, for error messages."""
    gpus = [f"{name} (soc {soc})" for soc, name in CudaBackend.found_devices()] or ["no CUDA GPU"]
    npus = [f"{name} (soc {soc})" for soc, name in NpuBackend.found_devices()]
    if not npus:
        npus = [f"no Ascend NPU ({NpuBackend.unavailable()})"]
    return ", ".join([*gpus, *npus, "cpu (Triton interpreter)"])


@dataclass(frozen=True)
class SocProfile:
    """What a search on a soc may vary and must respect, known without its device."""

    launch_options: frozenset[str]
    limits: DeviceLimits
    option_defaults: dict[str, int | str]
    #: Compiler options this soc's searches cannot vary, and why (Ascend: `npu_options`).
    left_out: dict[str, str] = field(default_factory=dict)
    #: How an Ascend soc compiles (`NPU_MODES`); "simd" elsewhere.
    mode: str = "simd"

    @classmethod
    def of(cls, backend: Backend) -> SocProfile:
        """What a search on a backend's device may vary and must respect."""
        return cls(
            backend.launch_options,
            backend.limits,
            dict(backend.option_defaults),
            mode=getattr(backend, "mode", "simd"),
        )

    @property
    def compiler_options(self) -> frozenset[str]:
        """The compiler options a search varies beyond multibuffer (`--npu-options`)."""
        return self.launch_options & frozenset(npu_options_module.OPTIONS)


def soc_profile(soc: str, npu_mode: str = "simd", npu_options: tuple[str, ...] = ()) -> SocProfile:
    """The launch options, static limits and option defaults of a known soc in a mode, with the
    compiler options a search chose (`--npu-options`, Ascend only)."""
    known = check_soc(soc)
    if known.kind == BackendKind.NPU:
        check_mode(soc, npu_mode)
        options = npu_options_module.chosen(soc, npu_options) if npu_mode == "simd" else frozenset()
        return SocProfile(
            npu_launch_options(npu_mode, options),
            npu_limits(soc, npu_mode),
            npu_option_defaults(soc, npu_mode),
            npu_options_module.left_out(soc, triton_ascend.installed()),
            npu_mode,
        )
    if npu_options:
        raise UserError(f"--npu-options is for an Ascend soc, not {soc!r}")
    if npu_mode != "simd":
        raise UserError(f"--npu-mode {npu_mode} is for an Ascend soc, not {soc!r}")
    limits = DeviceLimits(shared_memory_bytes=known.shared_memory_bytes)
    return SocProfile(BACKENDS[known.kind].launch_options, limits, {})


def _compiled() -> None:
    """Kernels of a device backend run compiled, not in the interpreter."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        os.environ["TRITON_INTERPRET"] = "0"


def spec_here(
    soc: str | None = None,
    npu_mode: str = "simd",
    npu_options: tuple[str, ...] = (),
    timer: str | None = None,
) -> BackendSpec:
    """The spec of `soc` on this machine; None picks the first accelerator found, else the
    interpreter. `npu_mode` (simd or simt) is how an Ascend NPU compiles, `npu_options` the
    compiler options its searches vary; other socs take only "simd" and no options. `timer`: a
    name of `TIMERS`, None for the kind's default."""
    if npu_options and not is_npu_soc(soc or ""):
        raise UserError(f"--npu-options is for an Ascend soc, not {soc!r}")
    if npu_mode not in NPU_MODES:
        raise UserError(f"unknown --npu-mode {npu_mode!r}; use one of {', '.join(NPU_MODES)}")
    if npu_mode != "simd" and soc is None:
        raise UserError(f"--npu-mode {npu_mode} needs --soc naming an Ascend soc")
    if npu_mode != "simd" and not is_npu_soc(soc or ""):
        raise UserError(f"--npu-mode {npu_mode} is for an Ascend soc, not {soc!r}")
    if soc == CPU:
        return BackendSpec.make(BackendKind.CPU, CPU, timer=timer)
    for kind in DEVICE_KINDS:
        found = [s for s, _ in BACKENDS[kind].found_devices()]
        soc = soc or (found[0] if found else None)
        if soc in found:
            return BackendSpec.make(kind, soc, npu_mode, npu_options, timer)
    if soc is None:
        return BackendSpec.make(BackendKind.CPU, CPU, timer=timer)
    if check_soc(soc).kind == BackendKind.NPU:
        raise UserError(f"soc {soc!r} needs an Ascend NPU; this machine has: {found_devices()}")
    raise UserError(f"soc {soc!r} is not on this machine; found: {found_devices()}")


def open_backend(spec: BackendSpec) -> Backend:
    """The backend a spec names, on the first device of its soc here, timing with its timer."""
    if spec.kind == BackendKind.CPU:
        backend: Backend = CpuBackend()
    else:
        found = [s for s, _ in BACKENDS[spec.kind].found_devices()]
        if spec.soc not in found:
            raise UserError(f"soc {spec.soc!r} is not on this machine; found: {found_devices()}")
        _compiled()
        backend = BACKENDS[spec.kind].open(found.index(spec.soc), spec.npu_mode, spec.npu_options)
    backend.timer = TIMERS[spec.timer]()
    return backend


def get_backend(
    soc: str | None = None, npu_mode: str = "simd", npu_options: tuple[str, ...] = ()
) -> Backend:
    """The backend of `soc` on this machine with its default timer (see `spec_here`)."""
    return open_backend(spec_here(soc, npu_mode, npu_options))
