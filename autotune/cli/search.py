"""`autotune run` and `autotune status`: the search and its studies."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from autotuner.cases.options import NO_REQUEST, CaseRequest, case_options
from autotuner.measure.numbers import short_number, speedup_text
from core.errors import UserError
from core.socs import CPU

from .common import (
    DbOption,
    NpuModeOption,
    NpuOptionsOption,
    SocOption,
    config_text,
    console,
    database_of,
    err_console,
    next_step,
    npu_option_names,
    quiet_interpreter,
)


def _parse_trials(text: str) -> int | float:
    """`48` -> 48 trials; `25%` -> 0.25 of the feasible configs; errors quote the text given."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else int(text)
    except ValueError:
        raise UserError(
            f"malformed --trials {text!r}: a number such as 48, or a share such as 25%"
        ) from None
    if not (value > 0 if isinstance(value, int) else 0 < value <= 1):
        raise UserError(
            f"--trials must be a positive number of trials per study or a share in (0%, 100%], not {text}"
        )
    return value


def _summary_table(summaries, title: str) -> Table:
    table = Table(title=title)
    for column in ("kernel", "case", "soc", "strategy", "trials ok/failed/infeasible", "default ms", "best ms",
                   "verdict", "speedup", "winner"):  # fmt: skip
        table.add_column(column, justify="right" if column.endswith(("ms", "speedup")) else "left")
    captions = []
    if any(s.verdict for s in summaries):
        captions.append("with a verdict, default and best ms are the medians of the interleaved "
                        "re-timing the speedup comes from (trial times may be taken under load)")  # fmt: skip
    if any(s.soc == CPU for s in summaries):
        captions.append(
            "soc cpu: Triton interpreter times: they exercise the search, they are not performance numbers"
        )
    table.caption = "\n".join(captions) or None
    for s in summaries:
        default_ms, best_ms = s.default_ms, s.best_ms
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items()))
        verdict = s.verdict
        if verdict is None:
            verdict_text, speedup, winner = (
                "open",
                speedup_text(s.best_speedup),
                config_text(s.best_config),
            )
        else:
            verdict_text = verdict.text
            speedup = speedup_text(verdict.speedup)
            winner = config_text(verdict.winner)
            default_ms = verdict.default_median_ms
            best_ms = verdict.winner_median_ms
        if s.stale:
            verdict_text += " (stale: a newer study ran under another toolchain)"
        table.add_row(
            s.kernel, s.case, s.soc, s.strategy,
            f"{s.complete}/{sum(s.failures.values())}/{s.infeasible} of {s.budget}" + (f" ({failures})" if failures else ""),
            short_number(default_ms), short_number(best_ms), verdict_text, speedup, winner,
        )  # fmt: skip
    return table


@case_options
def run(
    op: Annotated[str, typer.Option("--op", help="The op to tune.")],
    soc: SocOption = None,
    kernel: Annotated[
        list[str] | None, typer.Option("--kernel", help="Only this kernel (repeatable).")
    ] = None,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Only this case (repeatable).")
    ] = None,
    trials: Annotated[
        str | None,
        typer.Option(
            help="Measured configs per study: a number, or a share of the feasible space such as "
            "25%; unset: the effort level's."
        ),
    ] = None,
    effort: Annotated[
        str | None,
        typer.Option(
            help="quick, standard or thorough: the search's budget, polish and re-timing "
            "(AUTOTUNE_EFFORT, else standard); --trials overrides its budget."
        ),
    ] = None,
    db: DbOption = None,
    seed: Annotated[int, typer.Option(help="Seed of the sampler.", min=0, max=2**32 - 1)] = 0,
    timeout: Annotated[
        float, typer.Option(help="Seconds a trial may take before its worker is replaced.")
    ] = 300.0,
    restart: Annotated[
        bool,
        typer.Option(
            "--restart",
            help="Discard the selected studies' trials and verdicts first and search them again "
            "(refused while live processes are measuring them, unless --force).",
        ),
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="--restart even studies live processes are measuring.")
    ] = False,
    sampler: Annotated[
        str,
        typer.Option(
            help="local (default, warm starts, local search, TPE steps), tpe, gp, random or "
            "exhaustive; where the feasible configs fit the budget, every one is measured."
        ),
    ] = "local",
    quiet: Annotated[bool, typer.Option("--quiet", help="No live display and no table.")] = False,
    stale: Annotated[
        bool,
        typer.Option(
            "--stale",
            help="Only the (kernel, case) pairs whose frozen config on this soc is stale (as "
            "`autotune status` counts them), among the --kernel and --case given.",
        ),
    ] = False,
    npu_mode: NpuModeOption = "simd",
    npu_options: NpuOptionsOption = "",
    timer: Annotated[
        str | None,
        typer.Option(
            help="How trials are timed, by name: host, cuda-events or npu-events (default: the "
            "soc's own, events on a device, the host clock on cpu)."
        ),
    ] = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Search launch configs: one Optuna study per (kernel, case, soc), every trial logged."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from autotuner.report.studies import summarize
    from autotuner.search import runner
    from autotuner.search.request import RunRequest
    from autotuner.settings import EFFORTS, settings
    from storage import open_database

    url = db or settings().db
    level = effort or settings().effort
    if level not in EFFORTS:
        raise UserError(f"unknown --effort {level!r}; use one of {', '.join(EFFORTS)}")
    chosen = EFFORTS[level]
    asked = RunRequest(
        op, soc, db_url=url, trials=_parse_trials(trials) if trials is not None else chosen.trials,
        kernels=kernel, cases=case, seed=seed, timeout_s=timeout, restart=restart, force=force,
        sampler=sampler, only_stale=stale, npu_mode=npu_mode,
        npu_options=npu_option_names(npu_options), timer=timer, effort=chosen, case_request=request,
    )  # fmt: skip
    quiet_interpreter()
    progress = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, disable=quiet,
    )  # fmt: skip
    tasks: dict[str, int] = {}

    def on_study(plan) -> None:
        total = min(plan.budget, len(plan.feasible))
        tasks[plan.name] = progress.add_task(
            f"{plan.kernel.name} {plan.case.name}", total=total, status=plan.strategy
        )

    def on_progress(p) -> None:
        parts = []
        if p.best_ms is not None:
            parts.append(f"best {p.best_ms:.4g} ms" + (" (interpreter)" if soc == CPU else ""))
            if p.default_ms:
                parts.append(f"{p.default_ms / p.best_ms:.2f}x default")
        failures = {**p.failures, **({"infeasible": p.infeasible} if p.infeasible else {})}
        if failures:
            parts.append("failed: " + ", ".join(f"{k} {v}" for k, v in sorted(failures.items())))
        progress.update(tasks[p.name], completed=p.used, status="; ".join(parts))

    try:
        with progress:
            records = runner.run(asked, on_study=on_study, on_progress=on_progress)
    except KeyboardInterrupt:
        err_console.print(
            "interrupted: the database is consistent; run the same command again to resume"
        )
        raise typer.Exit(130) from None
    if stale and not records:
        where = f" on {soc}" if soc else ""
        console.print(f"no stale frozen config of {op}{where} among those asked: nothing to tune")
        return
    names = {r.name for r in records}
    summaries = [s for s in summarize(open_database(url), op=op) if s.name in names]
    for s in summaries:
        if s.default_failure:
            err_console.print(
                f"warning: {s.kernel} {s.case} on {s.soc}: the default config (upstream's launch) "
                f"failed, {s.default_failure[:300]}; {s.complete} other trials completed",
                markup=False, highlight=False, soft_wrap=True,
            )  # fmt: skip
    if not quiet:
        console.print(_summary_table(summaries, f"autotune run --op {op}: {len(records)} studies"))
        where = f"--op {op} --soc {soc}" if soc else f"--op {op} --soc <the soc>"
        if soc == CPU:
            next_step("interpreter winners exercise the search only; `autotune serve` shows the "
                      "trials, and a run on a device (--soc H200, 910B, ...) gives numbers to freeze")  # fmt: skip
        else:
            next_step(f"`autotune freeze {where} --dry-run` shows what freezing the winners writes")


def status(
    db: DbOption = None,
    op: Annotated[str | None, typer.Option(help="Only this op.")] = None,
    soc: SocOption = None,
) -> None:
    """Studies with trial counts by state, best config and speedup over the default; then, per
    op, the frozen configs whose kernel or launch arguments changed since they were tuned, and
    with --soc naming a device of this machine, those tuned under other compiler or runtime
    versions (what `autotune check` calls stale there)."""

    from autotuner.backends import get_backend
    from autotuner.measure.toolchain import stale_configs, stale_line
    from autotuner.report.studies import summarize
    from core.socs import is_npu_soc
    from ops import all_ops, get_op

    summaries = summarize(database_of(db, create=False), op=op, soc=soc)
    versions = None
    if soc:
        try:
            versions = get_backend(soc).versions()
        except UserError as exc:
            err_console.print(
                f"note: versions not compared ({exc})",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
    stale = [
        line
        for spec in ([get_op(op)] if op else all_ops().values())
        if (line := stale_line(spec.name, stale_configs(spec, versions, soc)))
    ]
    if not summaries:
        console.print("no studies yet")
    for op_name in sorted({s.op for s in summaries}):
        group = [s for s in summaries if s.op == op_name]
        table = _summary_table(group, op_name)
        if any(is_npu_soc(s.soc) for s in group):
            # ub_overflow failures per study: how often the static unified-buffer model missed.
            rows = list(zip(*(list(column.cells) for column in table.columns), strict=True))
            table = _summary_table([], op_name)
            table.add_column("UB misses", justify="right")
            for cells, s in zip(rows, group, strict=True):
                table.add_row(*cells, str(s.ub_misses) if is_npu_soc(s.soc) else "-")
        console.print(table)
    for line in stale:
        console.print(line, markup=False, highlight=False)
