"""The `autotune` command line."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from .errors import UserError
from .socs import CPU
from .user_cases import NO_REQUEST, CaseRequest, case_options

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Search, freeze and check launch configs of Triton kernels ported to Ascend NPUs.",
)
console = Console(width=max(Console().width, 200))
err_console = Console(stderr=True)

OpOption = Annotated[list[str] | None, typer.Option("--op", help="Op name (repeatable).")]
SocOption = Annotated[
    str | None,
    typer.Option("--soc", help="cpu (Triton interpreter), a GPU such as H200, or an Ascend soc."),
]
DeviceOption = Annotated[
    str, typer.Option("--soc", help="The device: a GPU such as H200, an NPU, or cpu.")
]
NpuModeOption = Annotated[
    str,
    typer.Option(
        "--npu-mode",
        help="Ascend only: simd (the default) or simt (950 family: compile_mode=simt_only, warps searched).",
    ),
]
DbOption = Annotated[
    str | None,
    typer.Option(help="Database URL (default: AUTOTUNE_DB, else sqlite:///autotune.db)."),
]
GpuSocOption = Annotated[
    str | None,
    typer.Option(
        "--gpu-soc",
        help="The GPU whose upstream times are the GPU baseline, e.g. H200 (default: "
        "AUTOTUNE_GPU_SOC, else the newest upstream row measured on any GPU).",
    ),
]


def _database(url: str | None):
    """The database of `--db`, else of the settings (AUTOTUNE_DB, else sqlite:///autotune.db)."""
    from storage import open_database

    from .settings import settings

    return open_database(url or settings().db)


def _quiet_interpreter() -> None:
    # numpy warns about masked-out lanes (0/0, log 0) the interpreter still computes.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")


def _parse_trials(text: str) -> int | float:
    """`48` -> 48 trials; `25%` -> 0.25 of the feasible configs."""
    try:
        return float(text[:-1]) / 100 if text.endswith("%") else int(text)
    except ValueError:
        raise UserError(
            f"malformed --trials {text!r}: a number such as 48, or a share such as 25%"
        ) from None


def _fmt(x: float | None) -> str:
    if x is None:
        return "-"
    if x == float("inf"):
        return "inf"
    return f"{x:.2g}" if 1e-2 <= abs(x) < 1e3 or x == 0 else f"{x:.1e}"


@app.command()
@case_options
def verify(
    op: OpOption = None,
    all_ops: Annotated[bool, typer.Option("--all", help="Every op.")] = False,
    soc: SocOption = None,
    dtype: Annotated[
        str | None, typer.Option("--dtype", help="Only cases of this dtype (fp32, fp16, bf16).")
    ] = None,
    cases: Annotated[
        str | None,
        typer.Option(
            help="accuracy, performance, user (cases/<op>.yaml) or all; default: accuracy on "
            "cpu, all on a device."
        ),
    ] = None,
    level: Annotated[str | None, typer.Option(help="Dual-reference level L0, L1 or L2.")] = None,
    request: CaseRequest = NO_REQUEST,
    jobs: Annotated[
        int | None,
        typer.Option(
            help="Processes running cases; default: AUTOTUNE_VERIFY_JOBS_PER_DEVICE (4) per "
            "device of the soc, at most one per CPU core; 1 on cpu."
        ),
    ] = None,
    db: DbOption = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="Seconds per case and phase, and per op.")
    ] = False,
) -> None:
    """Port and upstream against a float64 CPU golden (CANN dual-reference metrics); verdicts stored."""
    from ops import all_ops as known_ops
    from ops import get_op
    from ops.spec import canonical_dtype

    from .backends import get_backend
    from .case_store import kind_for, user_cases
    from .settings import settings
    from .verify_report import VerifyReport
    from .verify_runner import default_jobs, run_cases
    from .verify_store import AccuracyStore

    if not op and not all_ops:
        raise UserError("name an op with --op, or use --all")
    if all_ops and request.given:
        raise UserError(
            "--shape and --cases-file name cases of one op; use them with --op, not --all"
        )
    request.check()
    names = list(known_ops()) if all_ops else list(dict.fromkeys(op or []))
    specs = [get_op(name) for name in names]
    want_dtype = canonical_dtype(dtype) if dtype else None
    level = level or settings().precision_level
    if level not in ("L0", "L1", "L2"):
        raise UserError(f"unknown level {level!r}; use L0, L1 or L2")
    backend = get_backend(soc)
    _quiet_interpreter()
    kinds = {
        "accuracy": ["accuracy"],
        "performance": ["performance"],
        "user": ["user"],
        "all": ["accuracy", "performance", "user"],
    }
    chosen = cases or ("accuracy" if backend.is_interpreter else "all")
    if chosen not in kinds:
        raise UserError(f"unknown --cases {chosen!r}; use accuracy, performance or all")

    todo = []
    for spec in specs:
        if request.given:
            if len(specs) != 1:
                raise UserError(
                    "--shape and --cases-file name cases of one op; name exactly one --op"
                )
            # Offsets pass as given: the launchers' checked mode names what is wrong with them.
            todo += [(spec, c) for c in request.cases(spec, backend.is_interpreter, strict=False)]
            continue
        for kind in kinds[chosen]:
            found = (
                [c for c, _ in user_cases(spec, kind_for(backend.is_interpreter))]
                if kind == "user"
                else spec.cases(kind)  # type: ignore[arg-type]
            )
            todo += [(spec, c) for c in found if want_dtype in (None, c.dtype)]
    if not todo:
        raise UserError(
            f"no {chosen} case matches the given --dtype" if dtype else f"no {chosen} case"
        )

    if jobs is not None and jobs < 1:
        raise UserError(f"--jobs must be at least 1, not {jobs}")
    database = _database(db)  # a bad URL fails before any case runs
    store = AccuracyStore(database, backend, level)
    jobs = min(default_jobs(backend) if jobs is None else jobs, len(todo))
    title = f"verify on {backend.describe()}, dual-reference level {level}, {jobs} process(es)"
    with VerifyReport(console, title, len(todo), jobs, profile) as report:
        for result in run_cases(todo, backend, level, jobs):  # type: ignore[arg-type]
            store.add(result)
            report.add(result)
    report.summary(f"stored {store.count} verdicts in {database.engine.url}")
    if report.failed:
        raise typer.Exit(1)


def _config_text(config: dict | None) -> str:
    return " ".join(f"{k}={v}" for k, v in (config or {}).items())


def _summary_table(summaries, title: str) -> Table:
    table = Table(title=title)
    for column in ("kernel", "case", "soc", "strategy", "trials ok/failed/infeasible", "default ms", "best ms",
                   "verdict", "speedup", "winner"):  # fmt: skip
        table.add_column(column, justify="right" if column.endswith(("ms", "speedup")) else "left")
    if any(s.soc == CPU for s in summaries):
        table.caption = "soc cpu: Triton interpreter times: they exercise the search, they are not performance numbers"
    for s in summaries:
        failures = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items()))
        verdict = s.verdict
        if verdict is None:
            verdict_text, speedup, winner = (
                "open",
                _fmt(s.best_speedup),
                _config_text(s.best_config),
            )
        else:
            verdict_text = "beats default" if verdict["beats_default"] else "default kept"
            if verdict.get("kept_frozen") and verdict.get("reason", "").startswith("kept"):
                verdict_text = "kept: within noise of the frozen config"
            elif "frozen_gain" in verdict:  # a new winner, A/B against the frozen config
                verdict_text += (
                    f"; beats the frozen config by {verdict['frozen_gain']:.1%} "
                    f"(p={verdict['frozen_p_value']:.1g})"
                )
            speedup = f"{verdict['speedup']:.2f}x" if verdict.get("speedup") else "-"
            winner = _config_text(verdict["winner"])
        if s.stale:
            verdict_text += " (stale: a newer study ran under another toolchain)"
        table.add_row(
            s.kernel, s.case, s.soc, s.strategy,
            f"{s.complete}/{sum(s.failures.values())}/{s.infeasible} of {s.budget}" + (f" ({failures})" if failures else ""),
            _fmt(s.default_ms), _fmt(s.best_ms), verdict_text, speedup, winner,
        )  # fmt: skip
    return table


@app.command()
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
        str,
        typer.Option(
            help="Measured configs per study: a number, or a share of the feasible space such as 25%."
        ),
    ] = "48",
    db: DbOption = None,
    seed: Annotated[int, typer.Option(help="Seed of the sampler.")] = 0,
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
    npu_mode: NpuModeOption = "simd",
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

    from storage import open_database

    from . import runner
    from .report import summarize
    from .settings import settings

    url = db or settings().db
    _quiet_interpreter()
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
            records = runner.run(op, soc, kernels=kernel, cases=case, trials=_parse_trials(trials), db_url=url, seed=seed,
                                 timeout_s=timeout, restart=restart, npu_mode=npu_mode, request=request,
                                 force=force, sampler=sampler, on_study=on_study,
                                 on_progress=on_progress)  # fmt: skip
    except KeyboardInterrupt:
        err_console.print(
            "interrupted: the database is consistent; run the same command again to resume"
        )
        raise typer.Exit(130) from None
    if not quiet:
        names = {r.name for r in records}
        summaries = [s for s in summarize(open_database(url), op=op) if s.name in names]
        console.print(_summary_table(summaries, f"autotune run --op {op}: {len(records)} studies"))


@app.command()
def status(
    db: DbOption = None,
    op: Annotated[str | None, typer.Option(help="Only this op.")] = None,
    soc: SocOption = None,
) -> None:
    """Studies with trial counts by state, best config and speedup over the default."""

    from .report import summarize
    from .socs import is_npu_soc

    summaries = summarize(_database(db), op=op, soc=soc)
    if not summaries:
        console.print("no studies yet")
        return
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


@app.command()
@case_options
def freeze(
    op: Annotated[str, typer.Option("--op", help="The op to freeze.")],
    soc: Annotated[str, typer.Option("--soc", help="The soc whose winners are frozen.")],
    label: Annotated[
        str | None,
        typer.Option(help="Round label, e.g. M1 or M2 (default: the last one, else M1)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the diff, write nothing.")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Freeze studies with fewer completed trials than the minimum."
        ),
    ] = False,
    db: DbOption = None,
    gpu_soc: GpuSocOption = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Write each study's verified winner into the kernel file, the performance json and frozen_configs/."""
    from ops import get_op

    from .freeze import freeze as run_freeze
    from .socs import KNOWN_SOCS

    spec = get_op(op)
    if soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    only = request.cases(spec, soc == CPU) or None
    result = run_freeze(
        _database(db),
        spec,
        soc,
        label=label,
        dry_run=dry_run,
        force=force,
        cases=only,
        gpu_soc=gpu_soc,
    )
    for entry in result.entries:
        if entry.kept:
            console.print(
                f"kept: within noise: {entry.kernel} {entry.case} stays at "
                f"{_config_text(entry.config)} (the study's best did not beat it in an A/B)",
                markup=False, highlight=False,
            )  # fmt: skip
    if dry_run:
        console.print(result.diff() or "no change", markup=False, highlight=False, soft_wrap=True)
        return
    console.print(
        f"froze {len(result.entries)} (kernel, case) winners of {op} on {soc} as {result.label}"
    )
    for path in result.changed:
        console.print(f"  wrote {path}", markup=False, highlight=False)
    if not result.changed:
        console.print("  nothing changed")
    if result.untuned:
        console.print(
            f"  not tuned on {soc} (launchers use the nearest frozen case or the default): {', '.join(result.untuned)}"
        )
    if result.version_recorded:
        console.print(f"  recorded frozen version {result.label} in the database")


@app.command()
@case_options
def baseline(
    op: Annotated[list[str], typer.Option("--op", help="Op name (repeatable).")],
    soc: DeviceOption,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Only these cases (repeatable).")
    ] = None,
    db: DbOption = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Time upstream (the GPU baseline on a GPU), the port's default and its frozen configs."""
    from ops import get_op

    from .backends import get_backend
    from .baseline import cases_for, record_baselines

    specs = [get_op(name) for name in op]
    backend = get_backend(soc)
    if request.given and len(specs) != 1:
        raise UserError("--shape and --cases-file name cases of one op; name exactly one --op")
    asked = {spec.name: request.cases(spec, backend.is_interpreter) for spec in specs}
    if backend.is_interpreter:
        _quiet_interpreter()
    database = _database(db)
    table = Table(
        title=f"baselines on {backend.describe()}"
        + (" (interpreter times)" if backend.is_interpreter else "")
    )
    for column in ("op", "case", "part", "source", "median ms", "p20-p80 ms", "n"):
        table.add_column(column, justify="right" if "ms" in column or column == "n" else "left")
    available = {
        spec.name: {c.name: c for c in cases_for(spec, backend, database)} for spec in specs
    }
    unknown = [c for c in case or () if not any(c in cases for cases in available.values())]
    if unknown:
        valid = sorted({name for cases in available.values() for name in cases})
        raise UserError(f"unknown case {unknown[0]!r} on {backend.soc}; valid: {', '.join(valid)}")
    for spec in specs:
        chosen = [c for name, c in available[spec.name].items() if name in (case or ())]
        if not case and not asked[spec.name]:
            chosen = list(available[spec.name].values())
        chosen += [c for c in asked[spec.name] if c not in chosen]
        request.register(spec, database)
        for row in record_baselines(database, spec, backend, chosen):
            table.add_row(
                row.op,
                row.case_name,
                row.part,
                row.source,
                _fmt(row.median_ms),
                f"{_fmt(row.p20_ms)}-{_fmt(row.p80_ms)}",
                str(row.n),
            )
    console.print(table)


@app.command()
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
    """Re-time the frozen port against its baselines; exit 1 on a significant slow-down."""
    import json

    from ops import get_op

    from .backends import get_backend
    from .check import ALPHA
    from .check import check as run_check
    from .settings import settings

    spec = get_op(op)
    backend = get_backend(soc)
    if backend.is_interpreter:
        _quiet_interpreter()
    threshold = settings().check_threshold if threshold is None else threshold
    only = [c.name for c in request.cases(spec, backend.is_interpreter)] or None
    report = run_check(_database(db), spec, backend, threshold, cases=only, gpu_soc=gpu_soc)
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
                _fmt(c.baseline.median_ms), _fmt(v.median_ms), f"{v.change:+.1%}", _fmt(v.p_value),
                f"{v.absolute_change:+.1%}", _fmt(v.gpu_ratio),
                "[red]REGRESSED[/]" if v.regressed else "[green]ok[/]",
            )  # fmt: skip
        console.print(table)
    for line in report.skipped:
        err_console.print(f"not checked: {line}", markup=False, highlight=False)
    for c in report.checked:
        if c.toolchain_changes:
            err_console.print(
                f"stale: {c.verdict.case_name} {c.verdict.part} was frozen under another "
                f"toolchain ({'; '.join(c.toolchain_changes)}); tune it again",
                markup=False, highlight=False,
            )  # fmt: skip
    if report.regressed:
        raise typer.Exit(1)


@app.command()
def export(
    file: Annotated[Path, typer.Argument(help="The JSON file to write.")],
    op: OpOption = None,
    soc: Annotated[str | None, typer.Option("--soc", help="Only this soc.")] = None,
    db: DbOption = None,
) -> None:
    """Write baselines, frozen versions, accuracy verdicts and ceilings to a versioned JSON file."""
    from ops import get_op

    from .socs import KNOWN_SOCS
    from .transfer import export_document, write_export

    ops = [get_op(name).name for name in op or []]
    if soc and soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    document = export_document(_database(db), ops, soc)
    write_export(file, document)
    console.print(
        f"exported {len(document['baselines'])} baselines and "
        f"{len(document['frozen_versions'])} frozen versions, {len(document['accuracy'])} "
        f"accuracy verdicts and {len(document['ceilings'])} device ceilings to {file}",
        markup=False,
        highlight=False,
    )


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `autotune export`.")],
    db: DbOption = None,
) -> None:
    """Add the rows of an export (`autotune export`); rows already there are skipped."""

    from .transfer import import_document, parse_document, read_export

    document = read_export(file)
    parse_document(document)  # a malformed file is refused before any database is opened
    result = import_document(_database(db), document)
    console.print(
        f"imported {file}: {result.baselines_added} baselines added, {result.baselines_skipped} "
        f"skipped; {result.versions_added} frozen versions added, {result.versions_skipped} skipped; "
        f"{result.accuracy_added} accuracy verdicts added, {result.accuracy_skipped} skipped; "
        f"{result.ceilings_added} device ceilings added, {result.ceilings_skipped} skipped",
        markup=False,
        highlight=False,
    )


@app.command()
def show(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    soc: SocOption = None,
    db: Annotated[
        str | None,
        typer.Option(
            help="Database URL for the history (default: AUTOTUNE_DB, else sqlite:///autotune.db)."
        ),
    ] = None,
) -> None:
    """The frozen table of an op (from its performance json) and its history across labels."""
    from ops import get_op

    from .paths import performance_json
    from .performance_json import frozen_sections, read
    from .show import history_rows

    spec = get_op(op)
    sections = frozen_sections(read(performance_json(op)))
    table = Table(title=f"{op}: frozen configs")
    for column in (
        "soc",
        "label",
        "kernel",
        "case",
        "config",
        "median ms",
        "p20-p80 ms",
        "default ms",
        "speedup",
        "GPU baseline ms",
        "ratio to GPU",
    ):
        table.add_column(
            column,
            justify="right" if "ms" in column or column in ("speedup", "ratio to GPU") else "left",
        )
    rows = 0
    for case_name, by_soc in sections.items():
        for soc_name, section in sorted(by_soc.items()):
            if soc and soc_name != soc:
                continue
            for kernel, entry in section["kernels"].items():
                baseline = entry.get("gpu_baseline_ms")
                band = f"{_fmt(entry.get('p20_ms'))}-{_fmt(entry.get('p80_ms'))}"
                speedup = (
                    f"{entry['speedup_over_default']:.2f}x"
                    if entry.get("speedup_over_default")
                    else "-"
                )
                ratio = f"{entry['median_ms'] / baseline:.2f}" if baseline else "-"
                table.add_row(
                    soc_name,
                    section["label"],
                    kernel,
                    case_name,
                    _config_text(entry["config"]),
                    _fmt(entry["median_ms"]),
                    band,
                    _fmt(entry.get("default_ms")),
                    speedup,
                    _fmt(baseline),
                    ratio,
                )
                rows += 1
    if any(soc_name == CPU for by_soc in sections.values() for soc_name in by_soc):
        table.caption = "soc cpu: Triton interpreter times, not performance numbers"
    console.print(table if rows else f"{op}: nothing frozen" + (f" on {soc}" if soc else ""))
    history = history_rows(_database(db), spec.name, soc)
    if history:
        past = Table(title=f"{op}: frozen versions")
        for column in ("soc", "label", "frozen at", "entries", "geomean speedup over default"):
            past.add_column(column)
        for row in history:
            past.add_row(*row)
        console.print(past)


@app.command()
def trials(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    soc: SocOption = None,
    case: Annotated[str | None, typer.Option("--case", help="Only this case.")] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="table, csv, parquet (redirect it) or json.")
    ] = "table",
    db: DbOption = None,
) -> None:
    """Every trial of the op's studies, one row each: config, state, category, times, error."""
    from ops import get_op

    from .tables import emit
    from .trials_table import trials_frame

    if fmt not in ("table", "csv", "parquet", "json"):
        raise UserError(f"unknown --format {fmt!r}; use table, csv, parquet or json")
    frame = trials_frame(_database(db), op, soc, case)
    if frame.empty:
        get_op(op)  # an unknown op is an error; a known one without studies an empty table
    note = (
        "soc cpu: Triton interpreter times, not performance numbers"
        if CPU in set(frame.soc)
        else None
    )
    emit(frame, fmt, console, f"{op}: {len(frame)} trials", note)


@app.command()
def report(
    soc: SocOption = None,
    op: OpOption = None,
    fmt: Annotated[str, typer.Option("--format", help="md or csv.")] = "md",
    db: DbOption = None,
    measure: Annotated[
        bool,
        typer.Option(
            "--measure", help="First measure and store this device's ceilings (roofline)."
        ),
    ] = False,
) -> None:
    """Per op and case: frozen speedup over the default, ratio to the GPU, share of the roofline."""
    from ops import get_op

    from .perf_report import report_text

    ops = [get_op(name).name for name in op or []]
    print(report_text(_database(db), soc, ops, fmt, measure), end="")


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8000,
) -> None:
    """The dashboard and JSON API (read-only unless AUTOTUNE_API_TOKEN is set)."""
    import uvicorn

    from api.main import create_app

    uvicorn.run(create_app(db), host=host, port=port, log_level="info")


@app.command()
def lint(
    path: Annotated[Path | None, typer.Argument(help="An op folder or a folder of them.")] = None,
) -> None:
    """Check ATK folders against DESIGN.md: files, provenance, license, yaml fields."""
    from .lint import lint as run_lint
    from .paths import ATK_ROOT, project_root

    target = path or project_root() / ATK_ROOT
    problems = run_lint(target)
    for problem in problems:
        console.print(str(problem), markup=False, highlight=False, soft_wrap=True)
    if problems:
        err_console.print(f"{len(problems)} problem(s)")
        raise typer.Exit(1)
    console.print(f"{target}: no problems")


@app.command()
def space(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    kernel: Annotated[str, typer.Option("--kernel", help="One kernel of the op.")],
    case: Annotated[
        str, typer.Option("--case", help="One case of the op (accuracy or performance).")
    ],
    soc: DeviceOption,
    npu_mode: NpuModeOption = "simd",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """A kernel's search space on a case and soc: every config, feasible or rejected and why."""
    import json

    from .space_report import describe, render

    report = describe(op, kernel, case, soc, npu_mode)
    print(json.dumps(report) if as_json else render(report))


@app.command("cases")
def list_cases(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    db: DbOption = None,
) -> None:
    """The op's cases: built-in (accuracy, performance) and the user's (cases/<op>.yaml, database)."""
    from ops import get_op

    from .case_store import user_cases

    spec = get_op(op)
    table = Table(title=f"{op}: cases")
    for column in ("case", "kind", "shape", "dtype", "rows", "mean length", "max length", "source"):
        table.add_column(
            column, justify="right" if "length" in column or column == "rows" else "left"
        )
    rows = [(c, c.kind, "") for kind in ("accuracy", "performance") for c in spec.cases(kind)]  # type: ignore[arg-type]
    rows += [
        (c, "user", str(e.get("source", "")))
        for c, e in user_cases(spec, "performance", _database(db))
    ]
    for case, kind, source in rows:
        lengths = case.lengths or (0,)
        table.add_row(
            case.name, kind, " ".join(f"{k}={v}" for k, v in case.shape.items()), case.dtype,
            str(spec.jagged_rows(case)), f"{sum(lengths) / len(lengths):.1f}", str(max(lengths)), source,
        )  # fmt: skip
    console.print(table)


@app.command("ops")
def list_ops() -> None:
    """The ops, their kernels and tunables."""
    from ops import all_ops

    table = Table()
    for column in ("op", "kernel", "tunables", "cases (accuracy / performance)"):
        table.add_column(column)
    for spec in all_ops().values():
        for kernel in spec.kernels:
            tunables = ", ".join(f"{t.name} {list(t.values)}" for t in kernel.tunables)
            counts = f"{len(spec.cases('accuracy'))} / {len(spec.cases('performance'))}"
            table.add_row(spec.name, kernel.name, tunables, counts)
    console.print(table)


def main() -> None:
    """Console entry point: bad input is one line on stderr and exit code 2."""
    try:
        app()
    except (UserError, ValueError) as exc:
        if os.environ.get("AUTOTUNE_DEBUG") == "1":
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        err_console.print(f"error: {message}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(2)
