"""`autotune space`: a kernel's search space on one case and soc, every config judged by the static
constraints, without the soc's device."""

from __future__ import annotations

from typing import Any

from core.errors import UserError
from ops import get_op

from ..backends import soc_profile
from .space import space_for


def describe(op: str, kernel: str, case: str, soc: str, npu_mode: str = "simd") -> dict[str, Any]:
    """`{"tunables": [...], "feasible": [config, ...], "rejected": [{"config", "reason"}, ...],
    "default": {"config", "violation"}}`: the space a run on `soc` searches and what its static
    constraints keep (the default is measured even where they reject it)."""
    try:
        spec = get_op(op)
        kernel_spec = spec.kernel(kernel)
        chosen = spec.case(case)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    profile = soc_profile(soc, npu_mode)
    space = space_for(kernel_spec, profile.launch_options, profile.option_defaults)
    feasible, rejected = [], []
    for config in space.configs():
        reason = kernel_spec.violation(config, chosen, profile.limits)
        if reason is None:
            feasible.append(config)
        else:
            rejected.append({"config": config, "reason": reason})
    default = space.complete(kernel_spec.default(chosen))
    return {
        "tunables": [
            {"name": t.name, "values": list(t.values), "default": t.default} for t in space.tunables
        ],
        "feasible": feasible,
        "rejected": rejected,
        "default": {
            "config": default,
            "violation": kernel_spec.violation(default, chosen, profile.limits),
        },
    }


def render(report: dict[str, Any]) -> str:
    """The report as plain lines: tunables, then feasible configs, then rejected ones and why."""

    def text(config: dict[str, Any]) -> str:
        return " ".join(f"{k}={v}" for k, v in config.items())

    lines = ["tunables:"]
    for t in report["tunables"]:
        default = "" if t["default"] is None else f" (default when not named: {t['default']})"
        lines.append(f"  {t['name']}: {', '.join(map(str, t['values']))}{default}")
    default = report["default"]
    lines.append(f"default: {text(default['config'])}")
    if default["violation"]:
        lines.append(
            f"  (measured although the static constraints reject it: {default['violation']})"
        )
    lines.append(f"feasible: {len(report['feasible'])}")
    lines += [f"  {text(config)}" for config in report["feasible"]]
    lines.append(f"rejected: {len(report['rejected'])}")
    lines += [f"  {text(r['config'])}: {r['reason']}" for r in report["rejected"]]
    return "\n".join(lines)
