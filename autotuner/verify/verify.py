"""`autotune verify`: port and upstream against a float64 CPU golden, case by case."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from ops.ports import load_port
from ops.spec import Case, OpSpec

from ..atk.generated_block import nearest_warning
from ..backends import Backend
from ..measure.accuracy import Errors, Level, Verdict, judge, measure
from ..references.source import LIVE, ReferenceSource
from ..references.store import Entry, capture, inputs_sha256

#: The phases of a case, in the order they run; `compile` is the part of `port` and `upstream`
#: spent compiling kernels (or loading them from Triton's cache), where Triton can report it.
PHASES = ("inputs", "port", "upstream", "torch", "golden", "compare", "compile")


@dataclass(frozen=True)
class Row:
    """The verdict on one output of one case."""

    op: str
    case: Case
    output: str
    port: Errors
    #: Errors of the second reference: upstream where it runs the case, else torch in the case dtype.
    second: Errors | None
    second_name: str  # "upstream" or "torch"
    verdict: Verdict
    #: Where upstream's outputs came from when not from this machine: "on H200, saved 2026-12-04".
    second_from: str | None = None

    @property
    def reference(self) -> str:
        """The second reference in words: "upstream", "torch", "upstream on H200, saved ..."."""
        return f"{self.second_name} {self.second_from}" if self.second_from else self.second_name


@dataclass
class CaseResult:
    """The rows of one case, the configs the port ran, where the time went, and the launchers'
    nearest-frozen-case warnings it raised."""

    op: str
    case: Case
    rows: list[Row] = field(default_factory=list)
    configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # kernel -> config
    seconds: dict[str, float] = field(default_factory=dict)  # phase -> wall seconds
    nearest: list[tuple[str, str]] = field(default_factory=list)  # (kernel, soc)
    #: Upstream's outputs as a reference set's entry and files, where verify saves references
    #: (bytes, not tensors: they cross from a worker process whole).
    reference: tuple[Entry, dict[str, bytes]] | None = None


def _to_cpu(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.cpu() for k, v in inputs.items()}


@contextmanager
def _compile_clock(seconds: dict[str, float]) -> Iterator[None]:
    """Add the time Triton spends in compiles (cache misses in memory) to seconds["compile"].

    Triton's JIT hooks (`triton.knobs.runtime`, Triton 3.4 on) are called just before and after
    each compile; where they do not exist (triton-ascend 3.2) nothing is added.
    """
    try:
        from triton import knobs
    except ImportError:
        yield
        return
    runtime = knobs.runtime
    saved = runtime.jit_cache_hook, runtime.jit_post_compile_hook
    started: list[float] = []

    def before(**_: Any) -> bool:
        started.append(time.perf_counter())
        return False  # True would skip the compile

    def after(**_: Any) -> None:
        if started:
            seconds["compile"] = seconds.get("compile", 0.0) + time.perf_counter() - started.pop()

    runtime.jit_cache_hook, runtime.jit_post_compile_hook = before, after
    try:
        yield
    finally:
        runtime.jit_cache_hook, runtime.jit_post_compile_hook = saved


@contextmanager
def _picked_configs(op: OpSpec, configs: dict[str, dict[str, Any]]) -> Iterator[None]:
    """Record the config the port's launchers pick for each kernel (frozen, nearest or default)."""
    port = load_port(op.name)
    pick: Callable[..., dict[str, Any]] | None = getattr(port, "_pick_config", None)
    if pick is None:
        yield
        return

    def recording(kernel, shape, dtype, device, default):
        configs[kernel] = pick(kernel, shape, dtype, device, default)
        return configs[kernel]

    port._pick_config = recording
    try:
        yield
    finally:
        port._pick_config = pick


@contextmanager
def environment(variable: str | None, value: str | None) -> Iterator[None]:
    """`variable` set to `value` for the block, then as it was (nothing where either is None)."""
    if variable is None or value is None:
        yield
        return
    saved = os.environ.get(variable)
    os.environ[variable] = value
    try:
        yield
    finally:
        if saved is None:
            del os.environ[variable]
        else:
            os.environ[variable] = saved


def verify_case(
    op: OpSpec,
    case: Case,
    backend: Backend,
    level: Level,
    references: ReferenceSource = LIVE,
    keep_upstream: bool = False,
) -> CaseResult:
    """Run the port (checked mode), the second references and the float64 CPU golden.

    The second reference of an output is upstream where upstream can produce it (run here, or
    from `references` made on another machine); where it cannot (a dtype or shape upstream does
    not support), torch's own ops in the case dtype on the same device, as FlashAttention's tests
    and the TileLang report's dual benchmark do. `keep_upstream`: the result keeps upstream's
    outputs and the inputs' hash, for a reference set.
    """
    result = CaseResult(op.name, case)
    seconds = result.seconds

    @contextmanager
    def phase(name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        backend.synchronize()
        seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - start

    with warnings.catch_warnings(record=True) as caught, _compile_clock(seconds):
        with phase("inputs"):
            inputs = op.make_inputs(case, backend.device)
        checked = environment("AUTOTUNE_CHECK", "1")  # launchers validate offsets, shapes first
        with phase("port"), _picked_configs(op, result.configs), checked:
            port = op.run_port(inputs)
        with phase("upstream"):
            upstream, upstream_from = references.upstream(op, case, inputs)
        torch_outputs = {}
        with phase("torch"):
            if set(port) - set(upstream):
                torch_outputs = op.reference(inputs, compute_dtype=case.torch_dtype)
    for warning in caught:
        said = nearest_warning(warning.message)
        if said:
            result.nearest.append(said)
        else:  # not ours to keep quiet
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    with phase("golden"):
        cpu_inputs = _to_cpu(inputs)
        golden = op.reference(cpu_inputs)
    if keep_upstream:
        result.reference = capture(op, case, inputs_sha256(cpu_inputs), upstream, backend)
    with phase("compare"):
        for name, actual in port.items():
            row = _row(op, case, name, actual, golden, cpu_inputs, upstream, torch_outputs, level)
            if name in upstream and upstream_from:
                row = replace(row, second_from=upstream_from)
            result.rows.append(row)
    return result


def _row(op, case, name, actual, golden, cpu_inputs, upstream, torch_outputs, level) -> Row:
    want = op.comparable(name, golden[name], cpu_inputs)
    port_errors = measure(op.comparable(name, actual.cpu(), cpu_inputs), want, case.dtype)
    second_name = "upstream" if name in upstream else "torch"
    second = (upstream if name in upstream else torch_outputs).get(name)
    second_errors = None
    if second is not None:
        second_errors = measure(
            op.comparable(name, second.detach().cpu(), cpu_inputs), want, case.dtype
        )
    verdict = judge(port_errors, second_errors, case.dtype, level)
    return Row(op.name, case, name, port_errors, second_errors, second_name, verdict)
