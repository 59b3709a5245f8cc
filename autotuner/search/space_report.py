"""`autotune space`: a kernel's search space on one case and soc, every config judged without the
soc's device: by the static constraints (the model's estimate), or with `--compile` by the real
compiler (an Ascend soc: `search.compiles`), beside the model's verdict."""

from __future__ import annotations

import statistics
from collections import Counter
from typing import Any

from core.errors import UserError
from core.socs import is_npu_soc
from ops import get_op
from ops.spec import KernelSpec
from storage import Database

from ..backends import SocProfile, soc_profile
from ..cases.store import find
from ..vocabulary import Fit
from .compiles import compile_configs
from .space import compiler_options, config_key, space_for

#: What a report's verdicts come from.
MODEL = (
    "the static constraints, the model's estimate (on an Ascend soc --compile asks the compiler)"
)


def describe(
    op: str,
    kernel: str,
    case: str,
    soc: str,
    npu_mode: str = "simd",
    npu_options: tuple[str, ...] = (),
    *,
    compile_with: Database | None = None,
    jobs: int = 2,
    timeout_s: float = 300.0,
) -> dict[str, Any]:
    """`{"tunables": [...], "feasible": [...], "rejected": [{"config", "reason"}, ...],
    "default": {"config", "violation"}, "judged_by": ...}`: the space a run on `soc` searches and
    what keeps a config out (the default is measured even where it is rejected).

    With `compile_with` (the database that keeps compile verdicts) every config is compiled:
    `feasible` is then exactly the configs the compiler planned, less those over a launch limit
    it cannot see (a grid over 65535 blocks), each `{"config", "verdict", "memory"}`; each
    rejected one says the compiler's reason, and both say the model's verdict (`"model"`);
    `"compiled"` sums it up."""
    try:
        spec = get_op(op)
        kernel_spec = spec.kernel(kernel)
        chosen = find(spec, case, "performance", compile_with)  # a user case as a run takes it
    except ValueError as exc:
        raise UserError(str(exc)) from None
    profile = soc_profile(soc, npu_mode, npu_options)
    space = space_for(kernel_spec, profile.launch_options, profile.option_defaults)
    default = space.complete(kernel_spec.default(chosen))
    report: dict[str, Any] = {
        "tunables": [
            {
                "name": t.name,
                "values": list(t.values),
                "default": t.default,
                "source": t.source,
            }
            for t in space.tunables
        ],  # fmt: skip
        "options": _options(kernel_spec, soc, profile),
        "default": {
            "config": default,
            "violation": kernel_spec.violation(default, chosen, profile.limits),
        },
    }
    if compile_with is None:
        feasible, rejected = space.partition(chosen, profile.limits)
        return {
            **report,
            "feasible": feasible,
            "rejected": [{"config": c, "reason": reason} for c, reason in rejected],
            "judged_by": MODEL,
        }
    probes = _probes(report["options"], default)
    verdicts = compile_configs(
        compile_with, op, kernel, chosen, soc, [*space.configs(), *probes], jobs=jobs,
        timeout_s=timeout_s,
    )  # fmt: skip
    for option in report["options"]:
        if option["state"] != "left out":
            option["compiled"] = {
                str(value): verdicts[config_key({**default, option["name"]: value})][1].category
                for value in option["values"]
            }
    feasible, rejected = [], []
    for config in space.configs():
        _, result, _ = verdicts[config_key(config)]
        model = kernel_spec.on_chip_violation(config, chosen, profile.limits)
        launch = kernel_spec.launch_violation(config, chosen, profile.limits)
        if result.ok and launch is None:
            feasible.append(
                {"config": config, "verdict": result.category, "memory": result.memory,
                 "multibuffer_dropped": result.multibuffer_dropped, "model": model}
            )  # fmt: skip
            continue
        reason = launch or f"{result.category}: {result.message}".rstrip(": ")
        rejected.append(
            {"config": config, "reason": reason, "compiler": result.as_dict(), "model": model}
        )
    compiled = [result for _, result, _ in verdicts.values()]
    return {
        **report,
        "feasible": feasible,
        "rejected": rejected,
        "judged_by": f"the compiler: {soc} as {_compiler_name(soc)}",
        "compiled": {
            "configs": len(compiled),
            "from_database": sum(cached for *_, cached in verdicts.values()),
            "verdicts": dict(Counter(r.category for r in compiled)),
            "median_seconds": statistics.median(r.seconds for r in compiled) if compiled else None,
            # A multibuffered config the compiler plans only by turning multibuffer off is its
            # single-buffered twin, which the model judges on its own: rejecting it loses nothing.
            "model_rejects_planned": sum(
                1 for f in feasible if f["model"] and not f["multibuffer_dropped"]
            ),
            "model_rejects_planned_without_multibuffer": sum(
                1 for f in feasible if f["model"] and f["multibuffer_dropped"]
            ),
            "model_accepts_refused": sum(
                1
                for r in rejected
                if r["model"] is None and r["compiler"]["category"] not in tuple(Fit)
            ),
        },
    }


def _options(kernel: KernelSpec, soc: str, profile: SocProfile) -> list[dict[str, Any]]:
    """The compiler options that apply to the kernel on an Ascend soc: searched, searchable with
    `--npu-options`, or left out there and why."""
    if not is_npu_soc(soc) or profile.mode != "simd":
        return []
    out = []
    for option in compiler_options(kernel):
        reason = profile.left_out.get(option.name)
        state = "left out" if reason else (
            "searched" if option.name in profile.launch_options else "not searched"
        )  # fmt: skip
        out.append(
            {"name": option.name, "values": list(option.values),
             "default": profile.option_defaults.get(option.name, option.default), "state": state,
             "why": reason or "", "source": option.source}
        )  # fmt: skip
    return out


def _probes(options: list[dict[str, Any]], default: dict[str, Any]) -> list[dict[str, Any]]:
    """The default config with one compiler option at each of its values, for every option the
    soc lets a search vary: a value no probe plans is no tunable there."""
    return [
        {**default, o["name"]: value}
        for o in options
        if o["state"] != "left out"
        for value in o["values"]
    ]


def _compiler_name(soc: str) -> str:
    from ..backends.compile import ascend_compiler

    return ascend_compiler(soc).describe()


def render(report: dict[str, Any]) -> str:
    """The report as plain lines: tunables, then feasible configs, then rejected ones and why."""

    def text(config: dict[str, Any]) -> str:
        return " ".join(f"{k}={v}" for k, v in config.items())

    def memory(entry: dict[str, Any]) -> str:
        used = entry.get("memory") or {}
        return ", ".join(f"{space} {size} B" for space, size in sorted(used.items()))

    lines = [f"judged by {report['judged_by']}", "tunables:"]
    for t in report["tunables"]:
        default = "" if t["default"] is None else f" (default when not named: {t['default']})"
        source = f"; {t['source']}" if t["source"] else ""
        lines.append(f"  {t['name']}: {', '.join(map(str, t['values']))}{default}{source}")
    if report["options"]:
        lines.append("compiler options of this kernel here (search more with --npu-options):")
        for o in report["options"]:
            why = f": {o['why']}" if o["why"] else ""
            compiled = o.get("compiled")
            planned = (
                f"; compiled on the default config: {', '.join(f'{v} {c}' for v, c in compiled.items())}"
                if compiled
                else ""
            )
            lines.append(
                f"  {o['name']}: {', '.join(map(str, o['values']))} (default {o['default']}), "
                f"{o['state']}{why}{planned}"
            )
    default = report["default"]
    lines.append(f"default: {text(default['config'])}")
    if default["violation"]:
        lines.append(
            f"  (measured although the static constraints reject it: {default['violation']})"
        )
    lines.append(f"feasible: {len(report['feasible'])}")
    for entry in report["feasible"]:
        if "verdict" not in entry:
            lines.append(f"  {text(entry)}")
            continue
        model = f"; the model rejects it: {entry['model']}" if entry["model"] else ""
        lines.append(f"  {text(entry['config'])}: {entry['verdict']} ({memory(entry)}){model}")
    lines.append(f"rejected: {len(report['rejected'])}")
    for r in report["rejected"]:
        model = ""
        if "compiler" in r:
            model = f"; the model: {r['model']}" if r["model"] else "; the model accepts it"
        lines.append(f"  {text(r['config'])}: {r['reason']}{model}")
    if "compiled" in report:
        summary = report["compiled"]
        verdicts = ", ".join(f"{k} {v}" for k, v in sorted(summary["verdicts"].items()))
        lines.append(
            f"compiled {summary['configs']} configs ({summary['from_database']} from the "
            f"database): {verdicts}; the model rejects {summary['model_rejects_planned']} the "
            f"compiler planned and accepts {summary['model_accepts_refused']} it refused. "
            "Planned: accepted by every BiShengIR pass, memory planning included; nothing ran."
        )
    return "\n".join(lines)
