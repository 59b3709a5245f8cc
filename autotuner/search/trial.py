"""Inside a worker process: run one kernel config on one case, check it, time it.

Correctness comes first: a config whose output disagrees with the float64 reference is a failed
trial (`Failure.WRONG_RESULT`), whatever its speed. It must pass twice: a norm-wise relative error within
the op's tolerance, and element by element what `autotune verify` asks with the kernel's default
config as second reference (the CANN dual-reference ratios, else the single-reference thresholds),
so that a few far-off elements, which a norm hides, fail the trial and not a later verify.

The other failure categories are `autotuner.vocabulary.Failure`: the launch reads a device value on
the host (`HOST_SYNC`: its time would be the host's latency, `autotuner.measure.host_sync`), the
compiler rejected the config, resources or on-chip memory ran out, any other error (`RUNTIME`),
and, set by the parent, `TIMEOUT` and `CRASH` (the worker was replaced).

What the compiler said of a compile (Ascend: a multibuffer fallback, the UB used) goes with the
outcome in `extra`.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from ops import get_op
from ops.spec import Case, Config, KernelSpec, OpSpec, Tensors

from ..backends import Backend, Timing
from ..backends.compile import CompileResult
from ..backends.compile_verdict import classify, short
from ..measure.accuracy import Errors, judge, measure
from ..measure.host_sync import host_reads, host_scalars
from ..vocabulary import Failure, Fit


@dataclass
class Outcome:
    ok: bool
    category: Failure | Fit | None = None  # a failure's; a compile's verdict (`compile_outcome`)
    message: str = ""
    timing: dict[str, float] | None = None
    compile_s: float = 0.0
    error: float | None = None  # worst norm-wise relative error of the outputs
    #: The process is unusable after this failure (e.g. a CUDA error poisons its context).
    restart: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Reference(Mapping[str, torch.Tensor]):
    """The reference outputs in the case dtype, computed at the first look: the kernel inputs of
    a forward never look (a performance case's reference takes seconds to minutes on a host).

    A 16-bit case's reference is computed in float32 and cast: a host has no fast fp16/bf16
    matmul (an attention backward case's inputs took over 40 minutes in bf16); every op's
    reference returns its floating outputs in the compute dtype, so the kernel inputs keep the
    dtypes a case-dtype reference gives them (a compile reads nothing else of them)."""

    def __init__(self, spec: OpSpec, inputs: Tensors, dtype: torch.dtype) -> None:
        self.spec, self.inputs, self.dtype = spec, inputs, dtype
        self.outputs: Tensors | None = None

    def _computed(self) -> Tensors:
        if self.outputs is None:
            compute = torch.float32 if self.dtype.itemsize < 4 else self.dtype
            self.outputs = {
                name: t.to(self.dtype) if t.is_floating_point() else t
                for name, t in self.spec.reference(self.inputs, compute).items()
            }
        return self.outputs

    def __getitem__(self, name: str) -> torch.Tensor:
        return self._computed()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._computed())

    def __len__(self) -> int:
        return len(self._computed())


def compile_inputs(
    op: str, kernel: str, case: Case, device: torch.device
) -> tuple[OpSpec, KernelSpec, Tensors]:
    """What a compile of one kernel on a case needs: the inputs it reads, with the right shapes and
    dtypes. Intermediates come from a reference in the case dtype (see `_Reference`), a fraction
    of the float64 golden's memory, computed only where the kernel reads one; nothing is checked
    against it."""
    spec = get_op(op)
    inputs = spec.make_inputs(case, device)
    reference = _Reference(spec, inputs, case.torch_dtype)
    return spec, spec.kernel(kernel), spec.kernel_inputs(kernel, inputs, reference)


def compile_outcome(result: CompileResult, notes: dict[str, Any]) -> dict[str, Any]:
    """A compile's verdict as the pipeline takes an outcome: a refusal is the trial's failure,
    of the compiler's category; what the compiler said goes to the trial either way."""
    extra = {**notes, "compile_verdict": result.category}
    if result.memory:
        extra["planned_memory"] = result.memory
    if result.required_bits is not None:
        extra["required_bits"] = result.required_bits
    if result.multibuffer_dropped:
        extra["multibuffer_fallback"] = True
    outcome = Outcome(result.ok, compile_s=result.seconds, extra=extra)
    if not result.ok:
        outcome.category, outcome.message = result.category, result.message
    return outcome.as_dict()


class CaseRunner:
    """Inputs, golden and per-kernel inputs of one case, kept for all configs of a study."""

    def __init__(self, backend: Backend, op: str, kernel: str, case: Case) -> None:
        self.backend = backend
        self.spec = get_op(op)
        self.kernel = self.spec.kernel(kernel)
        self.case = case
        self.inputs = self.spec.make_inputs(case, backend.device)
        self.golden = self.spec.reference(self.inputs, torch.float64)
        self.kernel_inputs = self.spec.kernel_inputs(kernel, self.inputs, self.golden)
        self.tolerance = self.spec.tolerance_for(case)
        #: Each output's golden as compared, made once for every trial's two checks.
        self.wanted = {
            name: self.spec.comparable(name, self.golden[name], self.inputs)
            for name in self.kernel.outputs
            if name in self.golden
        }
        backend.release_memory()
        self.default_errors = self._default_errors()

    def _default_errors(self) -> dict[str, Errors] | None:
        """Element-wise errors of the default config: the second reference of every trial;
        None where the default cannot run here (an Ascend grid limit, say)."""
        try:
            outputs = self.launch(self.kernel.default(self.case))
            self.backend.synchronize()
        except Exception:  # noqa: BLE001 - then trials are judged by the norm alone
            return None
        return self.element_errors(outputs)

    def element_errors(self, outputs: dict[str, torch.Tensor]) -> dict[str, Errors]:
        return {
            name: measure(
                self.spec.comparable(name, outputs[name], self.inputs), want, self.case.dtype
            )
            for name, want in self.wanted.items()
        }

    def element_failure(self, outputs: dict[str, torch.Tensor]) -> str:
        """Why the outputs fail verify's standard against the default config's; "" if they pass."""
        if self.default_errors is None:
            return ""
        for name, errors in self.element_errors(outputs).items():
            verdict = judge(errors, self.default_errors[name], self.case.dtype, "L0")
            if not verdict.passed:
                return f"{name} against the default config: {verdict.reason}"
        return ""

    def launch(self, config: Config) -> dict[str, torch.Tensor]:
        return self.spec.launch(self.kernel.name, self.kernel_inputs, config)

    def error(self, outputs: dict[str, torch.Tensor]) -> float:
        worst = 0.0
        for name, wanted in self.wanted.items():
            have = self.spec.comparable(name, outputs[name], self.inputs).double()
            want = wanted.to(have.device)
            if not bool(torch.isfinite(have[torch.isfinite(want)]).all()):
                return float("inf")
            worst = max(worst, float((have - want).norm() / want.norm().clamp_min(1e-30)))
        return worst

    def measure(self, config: Config) -> Outcome:
        start = time.perf_counter()
        try:
            outputs = self.launch(config)
            self.backend.synchronize()
        except Exception as exc:  # noqa: BLE001 - every failure is a recorded trial
            category = classify(exc)
            return Outcome(
                False,
                category,
                short(exc),
                restart=category == Failure.RUNTIME and not self.backend.is_interpreter,
                extra=self.backend.compiler_notes(),
            )
        compile_s = time.perf_counter() - start
        notes = self.backend.compiler_notes()
        error = self.error(outputs)
        if not error <= self.tolerance:
            message = f"relative error {error:.3g} over the {self.case.dtype} tolerance {self.tolerance:g}"
            return Outcome(
                False, Failure.WRONG_RESULT, message, compile_s=compile_s, error=error, extra=notes
            )
        failure = self.element_failure(outputs)
        if failure:
            return Outcome(
                False, Failure.WRONG_RESULT, failure, compile_s=compile_s, error=error, extra=notes
            )

        launch = self.spec.timed_call(self.kernel.name, self.kernel_inputs, config)
        # It has just run (the check above), unless it also runs the kernel it feeds
        reads = host_reads(launch, host_scalars(self.kernel_inputs), warm=bool(self.kernel.feeds))
        if reads:  # its time would be the host's latency, not the kernel's
            message = f"the launch waits for the device: {', '.join(sorted(set(reads))[:3])}"
            return Outcome(
                False, Failure.HOST_SYNC, message, compile_s=compile_s, error=error, extra=notes
            )
        timing: Timing = self.backend.time(launch)
        notes = {**notes, **self.backend.cross_check(launch, timing)}
        return Outcome(True, timing=timing.as_dict(), compile_s=compile_s, error=error, extra=notes)

    def samples(self, config: Config, reps: int) -> list[float]:
        """At least `reps` single-call times (ms), at least 20 ms of kernel time, for re-timing;
        of the kernel with the one it feeds, where it feeds one (`OpSpec.timed_call`)."""
        call = self.spec.timed_call(self.kernel.name, self.kernel_inputs, config)
        call()
        return self.backend.samples(call, reps, min_ms=20.0)
