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
DbOption = Annotated[
    str | None,
    typer.Option(help="Database URL (default: AUTOTUNE_DB, else sqlite:///autotune.db)."),
]


def _database(url: str | None):
    """The database of `--db`, else of the settings (AUTOTUNE_DB, else sqlite:///autotune.db)."""
    from storage import open_database

    from .settings import settings

    return open_database(url or settings().db)


def _quiet_interpreter() -> None:
    # numpy warns about masked-out lanes (0/0, log 0) the interpreter still computes.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"triton\..*")


def _parse_shape(text: str) -> dict[str, int]:
    """`B=3,max_seq_len=16,D=32` -> dict; UserError naming the bad part."""
    shape: dict[str, int] = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise UserError(
                f"malformed --shape part {part!r}: expected KEY=INT, e.g. B=4,max_seq_len=16,D=32"
            )
        try:
            shape[key.strip()] = int(value)
        except ValueError:
            raise UserError(
                f"malformed --shape value {value!r} for {key.strip()}: not an integer"
            ) from None
    return shape


def _parse_ints(text: str, what: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise UserError(f"malformed {what} {text!r}: expected comma-separated integers") from None


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
            help="accuracy, performance or all; default: accuracy on cpu, all on a device."
        ),
    ] = None,
    shape: Annotated[
        str | None,
        typer.Option(help="One custom case, e.g. B=4,max_seq_len=16,D=32,T=20 (with --op)."),
    ] = None,
    offsets: Annotated[
        str | None, typer.Option(help="Jagged offsets of the custom case, e.g. 0,5,5,21.")
    ] = None,
    level: Annotated[str | None, typer.Option(help="Dual-reference level L0, L1 or L2.")] = None,
) -> None:
    """Port and upstream against a float64 CPU golden (CANN dual-reference metrics)."""
    from ops import all_ops as known_ops
    from ops import get_op
    from ops.spec import canonical_dtype

    from .accuracy import ratio
    from .backends import get_backend
    from .settings import settings
    from .verify import verify_case

    if not op and not all_ops:
        raise UserError("name an op with --op, or use --all")
    if all_ops and shape:
        raise UserError("--shape describes one case of one op; use it with --op, not --all")
    names = list(known_ops()) if all_ops else list(dict.fromkeys(op or []))
    specs = [get_op(name) for name in names]
    want_dtype = canonical_dtype(dtype) if dtype else None
    level = level or settings().precision_level
    if level not in ("L0", "L1", "L2"):
        raise UserError(f"unknown level {level!r}; use L0, L1 or L2")
    if offsets and not shape:
        raise UserError("--offsets goes with --shape")
    backend = get_backend(soc)
    _quiet_interpreter()
    kinds = {
        "accuracy": ["accuracy"],
        "performance": ["performance"],
        "all": ["accuracy", "performance"],
    }
    chosen = cases or ("accuracy" if backend.is_interpreter else "all")
    if chosen not in kinds:
        raise UserError(f"unknown --cases {chosen!r}; use accuracy, performance or all")

    todo = []
    for spec in specs:
        if shape:
            if len(specs) != 1:
                raise UserError("--shape describes one case of one op; name exactly one --op")
            user_offsets = _parse_ints(offsets, "--offsets") if offsets else None
            todo.append(
                (
                    spec,
                    spec.case_from_shape(
                        _parse_shape(shape), want_dtype or "float32", user_offsets
                    ),
                )
            )
            continue
        for kind in kinds[chosen]:
            todo += [(spec, c) for c in spec.cases(kind) if want_dtype in (None, c.dtype)]  # type: ignore[arg-type]
    if not todo:
        raise UserError("no case matches the given --dtype")

    table = Table(title=f"verify on {backend.describe()}, dual-reference level {level}")
    for column in ("op", "case", "output", "reference", "port MARE", "MERE", "RMSE", "ref MARE", "MERE", "RMSE",
                   "ratio MARE", "MERE", "RMSE", "verdict"):  # fmt: skip
        table.add_column(
            column,
            justify="left" if column in ("op", "case", "output", "mode", "verdict") else "right",
        )
    rows = []
    with console.status("verifying") as status:
        for spec, case in todo:
            status.update(f"verifying {spec.name} {case.name}")
            for row in verify_case(spec, case, backend, level):  # type: ignore[arg-type]
                rows.append(row)
                p, u, v = row.port, row.second, row.verdict
                ratios = (
                    [ratio(a, b) for a, b in ((p.mare, u.mare), (p.mere, u.mere), (p.rmse, u.rmse))]
                    if u
                    else [None] * 3
                )
                mode = {"dual": f"dual: {row.second_name}", "golden": f"dual: {row.second_name}, then golden",
                        "single": "golden only"}[v.mode]  # fmt: skip
                verdict = "[green]pass[/]" if v.passed else f"[red]FAIL[/] {v.reason}"
                if v.passed and v.reason:
                    verdict += f" (dual failed: {v.reason})"
                table.add_row(
                    spec.name, case.name, row.output, mode,
                    _fmt(p.mare), _fmt(p.mere), _fmt(p.rmse),
                    *(_fmt(x) for x in ((u.mare, u.mere, u.rmse) if u else (None,) * 3)),
                    *(_fmt(r) for r in ratios), verdict,
                )  # fmt: skip
    console.print(table)
    failed = [r for r in rows if not r.verdict.passed]
    by_torch = sum(r.second_name == "torch" for r in rows)
    fallback = sum(r.verdict.mode == "golden" for r in rows)
    console.print(
        f"{len(rows)} outputs of {len(todo)} cases: {len(rows) - len(failed)} passed, {len(failed)} failed; "
        f"second reference: upstream for {len(rows) - by_torch}, torch in the case dtype for {by_torch} "
        f"(upstream cannot run them); {fallback} passed only by the RFC's fallback to the golden"
    )
    if failed:
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
            speedup = f"{verdict['speedup']:.2f}x" if verdict.get("speedup") else "-"
            winner = _config_text(verdict["winner"])
        table.add_row(
            s.kernel, s.case, s.soc, s.strategy,
            f"{s.complete}/{sum(s.failures.values())}/{s.infeasible} of {s.budget}" + (f" ({failures})" if failures else ""),
            _fmt(s.default_ms), _fmt(s.best_ms), verdict_text, speedup, winner,
        )  # fmt: skip
    return table


@app.command()
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
                                 timeout_s=timeout, restart=restart, force=force, sampler=sampler, on_study=on_study,
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
) -> None:
    """Write each study's verified winner into the kernel file, the performance json and frozen_configs/."""
    from ops import get_op

    from .freeze import freeze as run_freeze
    from .socs import KNOWN_SOCS

    spec = get_op(op)
    if soc not in KNOWN_SOCS:
        raise UserError(f"unknown soc {soc!r}; known socs: {', '.join(KNOWN_SOCS)}")
    result = run_freeze(_database(db), spec, soc, label=label, dry_run=dry_run, force=force)
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
def baseline(
    op: Annotated[list[str], typer.Option("--op", help="Op name (repeatable).")],
    soc: DeviceOption,
    case: Annotated[
        list[str] | None, typer.Option("--case", help="Only these cases (repeatable).")
    ] = None,
    db: DbOption = None,
) -> None:
    """Time upstream (the GPU baseline on a GPU), the port's default and its frozen configs."""
    from ops import get_op

    from .backends import get_backend
    from .baseline import cases_for, record_baselines

    specs = [get_op(name) for name in op]
    backend = get_backend(soc)
    if backend.is_interpreter:
        _quiet_interpreter()
    database = _database(db)
    table = Table(
        title=f"baselines on {backend.describe()}"
        + (" (interpreter times)" if backend.is_interpreter else "")
    )
    for column in ("op", "case", "part", "source", "median ms", "p20-p80 ms", "n"):
        table.add_column(column, justify="right" if "ms" in column or column == "n" else "left")
    available = {spec.name: {c.name: c for c in cases_for(spec, backend)} for spec in specs}
    unknown = [c for c in case or () if not any(c in cases for cases in available.values())]
    if unknown:
        valid = sorted({name for cases in available.values() for name in cases})
        raise UserError(f"unknown case {unknown[0]!r} on {backend.soc}; valid: {', '.join(valid)}")
    for spec in specs:
        chosen = [c for name, c in available[spec.name].items() if not case or name in case]
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
    report = run_check(_database(db), spec, backend, threshold)
    if as_json:
        print(json.dumps([c.as_dict() for c in report.checked], indent=1))
    else:
        table = Table(
            title=f"check of {op} on {backend.describe()}: a regression is > {threshold:.0%} "
            f"slower with p < {ALPHA}"
            + (" (interpreter times, never a performance claim)" if backend.is_interpreter else "")
        )
        for column in ("case", "part", "label", "baseline ms", "now ms", "change %", "p-value",
                       "GPU ratio", "verdict"):  # fmt: skip
            numeric = column not in ("case", "part", "label", "verdict")
            table.add_column(column, justify="right" if numeric else "left")
        for c in report.checked:
            v = c.verdict
            table.add_row(
                v.case_name, v.part, v.label or "-", _fmt(c.baseline.median_ms), _fmt(v.median_ms),
                f"{v.change:+.1%}", _fmt(v.p_value), _fmt(v.gpu_ratio),
                "[red]REGRESSED[/]" if v.regressed else "[green]ok[/]",
            )  # fmt: skip
        console.print(table)
    for line in report.skipped:
        err_console.print(f"not checked: {line}", markup=False, highlight=False)
    if report.regressed:
        raise typer.Exit(1)


@app.command()
def export(
    file: Annotated[Path, typer.Argument(help="The JSON file to write.")],
    op: OpOption = None,
    soc: Annotated[str | None, typer.Option("--soc", help="Only this soc.")] = None,
    db: DbOption = None,
) -> None:
    """Write baselines and frozen versions to a versioned JSON file (for `autotune import`)."""
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
        f"{len(document['frozen_versions'])} frozen versions to {file}",
        markup=False,
        highlight=False,
    )


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `autotune export`.")],
    db: DbOption = None,
) -> None:
    """Add the baselines and frozen versions of an export; rows already there are skipped."""

    from .transfer import import_document, parse_document, read_export

    document = read_export(file)
    parse_document(document)  # a malformed file is refused before any database is opened
    result = import_document(_database(db), document)
    console.print(
        f"imported {file}: {result.baselines_added} baselines added, {result.baselines_skipped} "
        f"skipped; {result.versions_added} frozen versions added, {result.versions_skipped} skipped",
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
