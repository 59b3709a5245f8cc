"""`autotune space`, `autotune cases` and `autotune ops`: what there is to tune."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from autotuner.cases.options import NO_REQUEST, CaseRequest, case_options

from .common import (
    DbOption,
    DeviceOption,
    NpuModeOption,
    NpuOptionsOption,
    console,
    database_if_any,
    database_of,
    npu_option_names,
)


def space(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    kernel: Annotated[str, typer.Option("--kernel", help="One kernel of the op.")],
    case: Annotated[
        str,
        typer.Option(
            "--case", help="One case of the op (accuracy, performance, or user: `autotune cases`)."
        ),
    ],
    soc: DeviceOption,
    npu_mode: NpuModeOption = "simd",
    npu_options: NpuOptionsOption = "",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    compile_: Annotated[
        bool,
        typer.Option(
            "--compile",
            help="Ascend socs: compile every config with the real compiler (triton-ascend and "
            "ascendnpu-ir's bishengir, no NPU needed) instead of the static model's estimate.",
        ),
    ] = False,
    jobs: Annotated[int, typer.Option(help="Compile processes (with --compile).", min=1)] = 2,
    timeout: Annotated[
        float, typer.Option(help="Seconds one compile may take (with --compile).", min=1)
    ] = 300.0,
    db: DbOption = None,
) -> None:
    """A kernel's search space on a case and soc: every config, feasible or rejected and why."""
    import json

    from autotuner.search.space_report import describe, render

    database = database_of(db) if compile_ else None
    report = describe(
        op,
        kernel,
        case,
        soc,
        npu_mode,
        npu_option_names(npu_options),
        compile_with=database,
        jobs=jobs,
        timeout_s=timeout,
    )
    print(json.dumps(report) if as_json else render(report))


@case_options
def list_cases(
    op: Annotated[str, typer.Option("--op", help="The op.")],
    db: DbOption = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """The op's cases: built-in (accuracy, performance) and the user's (cases/<op>.yaml, database);
    a case given (--shape with its lengths, --cases-file) is added to them first, named by the
    hash of its lengths, and nothing is run."""
    from autotuner.cases.store import user_cases
    from ops import get_op

    spec = get_op(op)
    if request.given:
        added = request.register(spec, database_if_any(db))
        console.print(f"added to cases/{op}.yaml: {', '.join(added) or 'nothing new'}")
    table = Table(title=f"{op}: cases")
    for column in ("case", "kind", "shape", "dtype", "rows", "mean length", "max length", "source"):
        table.add_column(
            column, justify="right" if "length" in column or column == "rows" else "left"
        )
    rows = [(c, c.kind, "") for kind in ("accuracy", "performance") for c in spec.cases(kind)]  # type: ignore[arg-type]
    rows += [
        (c, "user", str(e.get("source", "")))
        for c, e in user_cases(spec, "performance", database_if_any(db))
    ]
    for case, kind, source in rows:
        lengths = case.lengths or (0,)
        table.add_row(
            case.name, kind, " ".join(f"{k}={v}" for k, v in case.shape.items()), case.dtype,
            str(spec.jagged_rows(case)), f"{sum(lengths) / len(lengths):.1f}", str(max(lengths)), source,
        )  # fmt: skip
    console.print(table)


def list_ops(
    upstream: Annotated[
        bool,
        typer.Option(
            "--upstream",
            help="Instead, every @triton.jit function of each upstream kernel file and the op "
            "and kernel that covers it, or why none is needed, or 'not ported'.",
        ),
    ] = False,
) -> None:
    """The ops, the keys of their `--shape`, their upstream, kernels and tunables."""
    from ops import all_ops

    if upstream:
        coverage_table()
        return

    table = Table()
    columns = (
        "op",
        "--shape keys",
        "upstream",
        "kernel",
        "tunables",
        "cases (accuracy / performance)",
    )
    for column in columns:
        table.add_column(column)
    for spec in all_ops().values():
        source = spec.upstream.source
        missing = spec.upstream.missing()
        upstream = f"{source.repo}@{source.commit[:7]}" + (
            f" (not here: {missing})" if missing else ""
        )
        for kernel in spec.kernels:
            tunables = ", ".join(f"{t.name} {list(t.values)}" for t in kernel.tunables)
            counts = f"{len(spec.cases('accuracy'))} / {len(spec.cases('performance'))}"
            keys = ",".join(spec.shape_keys)
            table.add_row(spec.name, keys, upstream, kernel.name, tunables, counts)
    console.print(table)


def coverage_table() -> None:
    """`autotune ops --upstream`: the coverage table (`ops.coverage`), and a line per upstream
    that is not found here."""
    from ops.coverage import describe, table

    rows, missing = table()
    out = Table()
    for column in ("upstream", "file", "@triton.jit function", "coverage", "covered by"):
        out.add_column(column, overflow="fold")
    for row in rows:
        out.add_row(row.source, row.file, row.function, row.coverage.value, describe(row))
    console.print(out)
    for source, reason in missing.items():
        console.print(f"{source}: not listed ({reason})", markup=False, highlight=False)
