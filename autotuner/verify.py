"""`autotune verify`: port and upstream against a float64 CPU golden, case by case."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from ops.spec import Case, OpSpec

from .accuracy import Errors, Level, Verdict, judge, measure
from .backends import Backend


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


def _to_cpu(inputs: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    return {k: v.cpu() for k, v in inputs.items()}


def verify_case(op: OpSpec, case: Case, backend: Backend, level: Level) -> Iterator[Row]:
    """Run the port (checked mode), the second references and the float64 CPU golden.

    The second reference of an output is upstream where upstream can produce it; where it cannot
    (a dtype or shape upstream does not support), torch's own ops in the case dtype on the same
    device, as FlashAttention's tests and the TileLang report's dual benchmark do.
    """
    os.environ["AUTOTUNE_CHECK"] = "1"  # launchers validate offsets and shapes first
    inputs = op.make_inputs(case, backend.device)
    port = op.run_port(inputs)
    upstream = op.run_upstream(inputs, case)
    torch_outputs = {}
    if set(port) - set(upstream):
        torch_outputs = op.reference(inputs, compute_dtype=case.torch_dtype)
    backend.synchronize()
    cpu_inputs = _to_cpu(inputs)
    golden = op.reference(cpu_inputs)
    for name, actual in port.items():
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
        yield Row(op.name, case, name, port_errors, second_errors, second_name, verdict)
