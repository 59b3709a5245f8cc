"""`autotune freeze`: the winners into the ATK folder and frozen_configs/."""

from __future__ import annotations

from typing import Annotated

import typer

from autotuner.cases.options import NO_REQUEST, CaseRequest, case_options
from core.socs import CPU

from .common import DbOption, GpuSocOption, config_text, console, database_of, next_step


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
            "--force",
            help="Freeze studies with fewer completed trials than the minimum; leave out (and "
            "name) studies without a verified winner instead of refusing.",
        ),
    ] = False,
    db: DbOption = None,
    gpu_soc: GpuSocOption = None,
    request: CaseRequest = NO_REQUEST,
) -> None:
    """Write each study's verified winner into the kernel file, the performance json and frozen_configs/."""
    from autotuner.freeze.freeze import freeze as run_freeze
    from core.socs import check_soc
    from ops import get_op

    spec = get_op(op)
    check_soc(soc)
    only = request.cases(spec, soc == CPU) or None
    result = run_freeze(
        database_of(db),
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
                f"{config_text(entry.config)} (the study's best did not beat it in an A/B)",
                markup=False, highlight=False,
            )  # fmt: skip
    if dry_run:
        console.print(result.diff() or "no change", markup=False, highlight=False, soft_wrap=True)
        next_step("the same command without --dry-run writes it")
        return
    console.print(
        f"froze {len(result.entries)} (kernel, case) winners of {op} on {soc} as {result.label}"
    )
    for path in result.changed:
        console.print(f"  wrote {path}", markup=False, highlight=False)
    if not result.changed:
        console.print("  nothing changed")
    if result.kept:
        console.print(
            f"  frozen before, kept as they were (no settled study of them in this database): {', '.join(result.kept)}"
        )
    if result.untuned:
        console.print(
            f"  not tuned on {soc} (launchers use the nearest frozen case or the default): {', '.join(result.untuned)}"
        )
    carried = [f"{e.kernel} {e.case}" for e in result.entries if "gpu_baseline_from" in e.numbers]
    if carried:
        console.print(
            f"  GPU baseline kept from the entry replaced (none of the part in this database): {', '.join(carried)}"
        )
    if result.filled:
        console.print(
            f"  GPU baseline filled in from this database (the entry had none): {', '.join(result.filled)}"
        )
    if result.version_recorded:
        console.print(f"  recorded frozen version {result.label} in the database")
    if soc == CPU and result.changed:
        paths = " ".join(str(path) for path in result.changed)
        console.print(
            "  soc cpu: these winners are Triton interpreter timings, not performance; they are "
            f"written into the files above for soc cpu only; undo: git checkout -- {paths}",
            markup=False, highlight=False, soft_wrap=True,
        )  # fmt: skip
    next_step(f"`autotune baseline --op {op} --soc {soc}` times upstream, the default and the "
              "frozen configs, the baseline later checks compare with")  # fmt: skip
