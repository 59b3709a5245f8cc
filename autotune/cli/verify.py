"""`autotune verify`: the accuracy proof, case by case."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from autotuner.cases.options import NO_REQUEST, CaseRequest, case_options
from core.errors import UserError

from .common import DbOption, OpOption, SocOption, console, database_of, quiet_interpreter

if TYPE_CHECKING:
    from autotuner.references.source import ReferenceSource


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
    save_references: Annotated[
        Path | None,
        typer.Option(
            "--save-references",
            help="Also write upstream's outputs of the cases to this folder, a reference set "
            "(manifest + .npy files) for --references on another machine.",
        ),
    ] = None,
    references: Annotated[
        str | None,
        typer.Option(
            "--references",
            help="Take upstream's outputs from a reference set (a folder --save-references "
            "wrote) or a reference server (http://HOST:PORT) instead of running upstream here.",
        ),
    ] = None,
) -> None:
    """Port and upstream against a float64 CPU golden (CANN dual-reference metrics); verdicts stored."""
    from autotuner.backends import get_backend
    from autotuner.cases.bound import Room
    from autotuner.cases.store import kind_for, user_cases
    from autotuner.references.store import write_set
    from autotuner.settings import settings
    from autotuner.verify.report import VerifyReport
    from autotuner.verify.runner import default_jobs, run_cases
    from autotuner.verify.store import AccuracyStore
    from ops import all_ops as known_ops
    from ops import get_op
    from ops.spec import canonical_dtype

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
    quiet_interpreter()
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
            room = Room.here(backend)
            asked = request.cases(spec, backend.is_interpreter, strict=False, room=room)
            todo += [(spec, c) for c in asked]
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
    if references and save_references:
        raise UserError("--save-references saves upstream run here; drop --references")
    database = database_of(db)  # a bad URL fails before any case runs
    with reference_source(references, todo) as source:
        store = AccuracyStore(database, backend, level)
        jobs = min(default_jobs(backend) if jobs is None else jobs, len(todo))
        title = f"verify on {backend.describe()}, dual-reference level {level}, {jobs} process(es)"
        keep = save_references is not None
        saved = []
        with VerifyReport(console, title, len(todo), jobs, profile) as report:
            for result in run_cases(todo, backend, level, jobs, source, keep):  # type: ignore[arg-type]
                store.add(result)
                report.add(result)
                if result.reference:
                    saved.append(result.reference)
    if save_references is not None:
        write_set(save_references, saved)
    stored = f"stored {store.count} verdicts in {database.engine.url}"
    if save_references is not None:
        stored += f"; saved upstream's outputs of {len(saved)} cases in {save_references}"
    report.summary(stored)
    if report.failed:
        raise typer.Exit(1)


@contextmanager
def reference_source(given: str | None, todo: list) -> Iterator[ReferenceSource]:
    """Where the second reference comes from: upstream here (nothing given), a reference set in
    a folder, or a server's answers fetched into a temporary set; every case is checked against
    it before any runs."""
    from autotuner.references.client import fetch_set
    from autotuner.references.source import LIVE, SavedReferences

    if given is None:
        yield LIVE
        return
    if "://" not in given:
        source = SavedReferences(Path(given))
        source.check(todo)
        yield source
        return
    with tempfile.TemporaryDirectory(prefix="autotune-references-") as folder:
        started = time.perf_counter()
        fetch_set(given, todo, Path(folder))
        console.print(
            f"upstream's outputs of {len(todo)} cases from {given} in "
            f"{time.perf_counter() - started:.1f} s",
            markup=False,
            highlight=False,
        )
        source = SavedReferences(Path(folder))
        source.check(todo)
        yield source
