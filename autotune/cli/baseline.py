"""`autotune baseline` and `autotune check`: the times a case is judged against, and the regression check."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from autotuner.cases.options import NO_REQUEST, CaseRequest, case_options
from autotuner.measure.numbers import short_number
from core.errors import UserError

from .common import (
    DbOption,
    DeviceOption,
    GpuSocOption,
    console,
    database_of,
    err_console,
    next_step,
    quiet_interpreter,
)

#: `autotune check`'s exit code when the device looked shared and nothing regressed (0: all ok,
#: 1: a regression, 2: bad input).
CONTENDED_EXIT = 3
VERDICTS = {
    "ok": "[green]ok[/]",
    "regressed": "[red]REGRESSED[/]",
    "contended": "[yellow]contended[/]",
}


@case_options
def baseline(
    op: Annotated[list[str], typer.Option("--op", help="Op name (repeatable).")],
    soc: DeviceOption,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Only these cases (repeatable).")
    ] = None,
    db: DbOption = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="Seconds per phase (compiles, timing, ...) per op.")
    ] = False,
    warm_jobs: Annotated[
        int | None,
        typer.Option(
            help="Processes that run every call once first, compiling in parallel (default: "
            "AUTOTUNE_BASELINE_WARM_JOBS, else 8; 0: none; never on the interpreter)."
        ),
    ] = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Time upstream (the GPU baseline on a GPU; where it tunes itself, at the config it
    picked), torch eager where the op has a torch form, the port's default and its frozen
    configs."""
    import time

    from autotuner.backends import get_backend
    from autotuner.baseline.baseline import (
        UPSTREAM_SOURCES,
        Profile,
        cases_for,
        changed_picks,
        record_baselines,
    )
    from autotuner.baseline.upstream_picks import describe
    from autotuner.baseline.warm import warm
    from autotuner.cases.bound import Room
    from autotuner.settings import settings
    from ops import get_op

    specs = [get_op(name) for name in op]
    backend = get_backend(soc)
    if request.given and len(specs) != 1:
        raise UserError("--shape and --cases-file name cases of one op; name exactly one --op")
    room = Room.here(backend)
    asked = {spec.name: request.cases(spec, backend.is_interpreter, room=room) for spec in specs}
    if backend.is_interpreter:
        quiet_interpreter()
    database = database_of(db)
    table = Table(
        title=f"baselines on {backend.describe()}"
        + (" (interpreter times)" if backend.is_interpreter else "")
    )
    columns = ("op", "case", "part", "source", "median ms", "p20-p80 ms", "n", "upstream's pick")
    for column in columns:
        table.add_column(column, justify="right" if "ms" in column or column == "n" else "left")
    available = {
        spec.name: {c.name: c for c in cases_for(spec, backend, database)} for spec in specs
    }
    unknown = [c for c in case or () if not any(c in cases for cases in available.values())]
    if unknown:
        valid = sorted({name for cases in available.values() for name in cases})
        raise UserError(f"unknown case {unknown[0]!r} on {backend.soc}; valid: {', '.join(valid)}")
    chosen: dict[str, list] = {}
    for spec in specs:
        named = [c for name, c in available[spec.name].items() if name in (case or ())]
        if not case and not asked[spec.name]:
            named = list(available[spec.name].values())
        chosen[spec.name] = named + [c for c in asked[spec.name] if c not in named]
        request.register(spec, database, room)
    jobs = settings().baseline_warm_jobs if warm_jobs is None else warm_jobs
    jobs = 0 if backend.is_interpreter else jobs  # the interpreter compiles nothing
    start = time.perf_counter()
    warmed = warm([(name, c) for name, cases in chosen.items() for c in cases], soc, jobs)
    warm_s = time.perf_counter() - start
    if profile:
        err_console.print(
            f"profile: warm-up: {warmed} calls in {jobs} processes, {warm_s:.1f} s",
            markup=False, highlight=False,
        )  # fmt: skip
    changed: list[str] = []
    profiles: dict[str, Profile] = {}
    for spec in specs:
        profiles[spec.name] = Profile()
        rows = record_baselines(
            database, spec, backend, chosen[spec.name], profile=profiles[spec.name]
        )
        for row in rows:
            table.add_row(
                row.op,
                row.case_name,
                row.part,
                row.source,
                short_number(row.median_ms),
                f"{short_number(row.p20_ms)}-{short_number(row.p80_ms)}",
                str(row.n),
                (describe(row.configs) or "its defaults") if row.source in UPSTREAM_SOURCES else "",
            )
        if profile:  # as each op ends: a run cut short still says where its time went
            spent = ", ".join(f"{k} {v:.1f}" for k, v in profiles[spec.name].seconds.items())
            err_console.print(f"profile: {spec.name}: {spent} s", markup=False, highlight=False)
        changed += changed_picks(database, rows)
        missing = spec.upstream_tma_missing(backend.device)
        if missing:
            err_console.print(
                f"{spec.name}: no upstream_tma baseline here: {missing}",
                markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
        shared = next(
            (r.device_load["why"] for r in rows if (r.device_load or {}).get("why")), None
        )
        if shared:
            err_console.print(
                f"{spec.name}: measured while the device looked shared ({shared}); its checks "
                "will say contended: baseline it again on a quiet device",
                markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    console.print(table)
    if profile:
        console.print(profile_table(profiles, warmed, jobs, warm_s))
    for line in changed:
        err_console.print(
            f"upstream's pick changed: {line}", markup=False, highlight=False, soft_wrap=True
        )
    next_step(f"`autotune check --op {specs[0].name} --soc {soc}` (one op at a time) re-times the "
              "frozen port against these baselines, exit 1 on a regression")  # fmt: skip


def profile_table(profiles: dict, warmed: int, jobs: int, warm_s: float) -> Table:
    """Seconds per op and phase, the parallel warm-up first."""
    phases = sorted({name for p in profiles.values() for name in p.seconds})
    table = Table(
        title=f"where the baseline's time went (s); first {warmed} calls run once in "
        f"{jobs} processes: {warm_s:.1f} s"
    )
    for column in ("op", *phases, "total"):
        table.add_column(column, justify="left" if column == "op" else "right")
    for op, p in profiles.items():
        cells = [f"{p.seconds.get(name, 0.0):.1f}" for name in phases]
        table.add_row(op, *cells, f"{sum(p.seconds.values()):.1f}")
    totals = [sum(p.seconds.get(name, 0.0) for p in profiles.values()) for name in phases]
    table.add_row("all", *(f"{t:.1f}" for t in totals), f"{sum(totals) + warm_s:.1f}")
    return table


@case_options
def check(
    op: Annotated[str, typer.Option("--op", help="The op to check.")],
    soc: DeviceOption,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON list on stdout.")] = False,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Slow-down of the median (a share) beyond which a significant one is a "
            "regression (default: AUTOTUNE_CHECK_THRESHOLD, else 0.05)."
        ),
    ] = None,
    gpu_soc: GpuSocOption = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Re-time the frozen port against its baselines; exit 1 on a significant slow-down, 3 when
    the device looked shared with another process (contended) and nothing regressed."""
    import json

    from autotuner.backends import get_backend
    from autotuner.baseline.check import ALPHA
    from autotuner.baseline.check import check as run_check
    from autotuner.measure.toolchain import stale_line
    from autotuner.settings import settings
    from ops import get_op

    spec = get_op(op)
    backend = get_backend(soc)
    if backend.is_interpreter:
        quiet_interpreter()
    threshold = settings().check_threshold if threshold is None else threshold
    only = [c.name for c in request.cases(spec, backend.is_interpreter)] or None
    report = run_check(
        database_of(db, create=False), spec, backend, threshold, cases=only, gpu_soc=gpu_soc
    )
    if as_json:
        print(json.dumps([c.as_dict() for c in report.checked], indent=1))
    else:
        table = Table(
            title=f"check of {op} on {backend.describe()}: a regression is a frozen/reference "
            f"ratio > {threshold:.0%} above its baseline's, with p < {ALPHA}, in two rounds"
            + (" (interpreter times, never a performance claim)" if backend.is_interpreter else "")
        )
        for column in ("case", "part", "label", "reference", "baseline ms", "now ms",
                       "ratio change %", "p-value", "absolute change %", "GPU ratio", "verdict"):  # fmt: skip
            numeric = column not in ("case", "part", "label", "reference", "verdict")
            table.add_column(column, justify="right" if numeric else "left")
        for c in report.checked:
            v = c.verdict
            table.add_row(
                v.case_name, v.part, v.label or "-", v.reference_source or "-",
                short_number(c.baseline.median_ms), short_number(v.median_ms), f"{v.change:+.1%}", short_number(v.p_value),
                f"{v.absolute_change:+.1%}", short_number(v.gpu_ratio),
                VERDICTS[v.outcome],
            )  # fmt: skip
        console.print(table)
        contended = sum(c.verdict.outcome == "contended" for c in report.checked)
        regressed = sum(c.verdict.regressed for c in report.checked)
        console.print(
            f"{len(report.checked)} checked: {regressed} regressed, {contended} contended, "
            f"{len(report.checked) - regressed - contended} ok",
            markup=False, highlight=False,
        )  # fmt: skip
    for c in report.checked:
        if c.verdict.outcome == "contended":
            err_console.print(
                f"contended: {c.verdict.case_name} {c.verdict.part}: the device looks shared "
                f"({c.verdict.contention}); its ratio could hide a regression, check it on a "
                "quiet device",
                markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    for c in report.checked:
        for note in c.notes:
            err_console.print(
                f"{c.verdict.case_name} {c.verdict.part}: {note}; run `autotune baseline` again",
                markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    for line in report.skipped:
        err_console.print(f"not checked: {line}", markup=False, highlight=False)
    stale = stale_line(op, report.stale)
    if stale:
        err_console.print(stale, markup=False, highlight=False, soft_wrap=True)
    next_step("`autotune serve` shows these verdicts on /regressions, beside the frozen results")
    if report.regressed:
        raise typer.Exit(1)
    if report.contended:
        raise typer.Exit(CONTENDED_EXIT)
