"""What `autotune verify` prints: each row as soon as its case is done (above a progress bar on a
terminal, plain lines otherwise), where the time went, and a summary as the last line."""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from types import TracebackType

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..measure.accuracy import ratio
from ..measure.numbers import short_number
from .verify import PHASES, CaseResult, Row

MODES = {"dual": "dual: {}", "golden": "dual: {}, then golden", "single": "golden only"}
#: Cases listed by `--profile` as the slowest.
SLOWEST = 10


def _triple(values) -> str:
    return "/".join(short_number(v) for v in values)


def row_line(row: Row) -> str:
    """One output's verdict on one line, with rich markup for its colour."""
    p, u, v = row.port, row.second, row.verdict
    ours = _triple((p.mare, p.mere, p.rmse))
    theirs = _triple((u.mare, u.mere, u.rmse) if u else (None,) * 3)
    ratios = _triple(
        [ratio(a, b) for a, b in ((p.mare, u.mare), (p.mere, u.mere), (p.rmse, u.rmse))]
        if u
        else [None] * 3
    )
    verdict = "[green]pass[/]" if v.passed else f"[red]FAIL[/] {v.reason}"
    if v.passed and v.reason:
        verdict += f" (dual failed: {v.reason})"
    mode = MODES[v.mode].format(row.reference)
    return (
        f"{row.op:<33} {row.case.name:<27} {row.output:<6} {mode:<29} "
        f"{ours:<20} {theirs:<20} {ratios:<16} {verdict}"
    )


HEADER = (
    f"{'op':<33} {'case':<27} {'output':<6} {'reference':<29} {'port MARE/MERE/RMSE':<20} "
    f"{'ref MARE/MERE/RMSE':<20} {'ratio':<16} verdict"
)


def _seconds_text(seconds: dict[str, float]) -> str:
    parts = [f"{name} {seconds[name]:.2f}" for name in PHASES if name in seconds]
    return "s: " + ", ".join(parts)


class VerifyReport:
    """Streams the rows of each case as it comes; `summary()` at the end."""

    def __init__(
        self, console: Console, title: str, cases: int, jobs: int, profile: bool = False
    ) -> None:
        self.console = console
        self.title = title
        self.cases = cases
        self.jobs = jobs
        self.profile = profile
        self.results: list[CaseResult] = []
        self.nearest: dict[tuple[str, str, str], None] = {}  # (op, kernel, soc), in order seen
        self.progress = Progress(
            TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TimeRemainingColumn(), console=console, transient=True,
            disable=not console.is_terminal,
        )  # fmt: skip
        self.task = self.progress.add_task("verify", total=cases)
        self.started = time.perf_counter()

    def __enter__(self) -> VerifyReport:
        self.console.print(self.title, markup=False, highlight=False)
        self.console.print(HEADER, markup=False, highlight=False)
        self.progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.progress.stop()

    def add(self, result: CaseResult) -> None:
        self.results.append(result)
        for row in result.rows:
            self.console.print(row_line(row), highlight=False, soft_wrap=True)
        for kernel, soc in result.nearest:
            key = (result.op, kernel, soc)
            if key not in self.nearest:
                self.nearest[key] = None
                self.console.print(
                    f"note: {result.op} {kernel}: no config frozen on {soc} for "
                    f"{result.case.name}; its launcher takes the nearest frozen case's "
                    "(said once per kernel and soc)",
                    markup=False,
                    highlight=False,
                    soft_wrap=True,
                )
        if self.profile:
            self.console.print(
                f"  {result.op} {result.case.name} {_seconds_text(result.seconds)}",
                markup=False,
                highlight=False,
            )
        self.progress.advance(self.task)

    @property
    def rows(self) -> list[Row]:
        return [row for result in self.results for row in result.rows]

    @property
    def failed(self) -> list[Row]:
        return [row for row in self.rows if not row.verdict.passed]

    def totals(self) -> Counter:
        """Seconds per phase, summed over the cases (and so over the processes)."""
        total: Counter = Counter()
        for result in self.results:
            total.update(result.seconds)
        return total

    def time_line(self) -> str:
        """Where the time went, in one line."""
        total = self.totals()
        spent = sum(v for k, v in total.items() if k != "compile") or 1.0
        parts = []
        for name in PHASES:
            if name == "compile":
                continue
            text = f"{name} {total[name]:.1f} s ({total[name] / spent:.0%})"
            if name == "port" and "compile" in total:
                text += f" of which compiling {total['compile']:.1f} s"
            parts.append(text)
        return "time in cases, summed over the processes: " + ", ".join(parts)

    def profile_tables(self) -> list[Table]:
        """Seconds per op and phase, and the slowest cases."""
        by_op: dict[str, Counter] = defaultdict(Counter)
        for result in self.results:
            by_op[result.op].update(result.seconds)
            by_op[result.op]["cases"] += 1
        ops = Table(title="seconds per op and phase (summed over the processes)")
        for column in ("op", "cases", "total", *PHASES):
            ops.add_column(column, justify="left" if column == "op" else "right")
        for op, seconds in sorted(by_op.items(), key=lambda item: -_total(item[1])):
            ops.add_row(op, str(seconds["cases"]), f"{_total(seconds):.1f}",
                        *(f"{seconds[p]:.2f}" for p in PHASES))  # fmt: skip
        slow = Table(title=f"the {SLOWEST} slowest cases, seconds")
        for column in ("op", "case", "total", *PHASES):
            slow.add_column(column, justify="left" if column in ("op", "case") else "right")
        ranked = sorted(self.results, key=lambda r: -_total(r.seconds))[:SLOWEST]
        for result in ranked:
            slow.add_row(result.op, result.case.name, f"{_total(result.seconds):.2f}",
                         *(f"{result.seconds.get(p, 0.0):.2f}" for p in PHASES))  # fmt: skip
        return [ops, slow]

    def summary(self, stored: str | None) -> None:
        """Where the time went, what was stored, and the counts as the last line."""
        if self.profile:
            for table in self.profile_tables():
                self.console.print(table)
        self.console.print(self.time_line(), markup=False, highlight=False, soft_wrap=True)
        if stored:
            self.console.print(stored, markup=False, highlight=False, soft_wrap=True)
        rows, failed = self.rows, self.failed
        by_torch = sum(r.second_name == "torch" for r in rows)
        elsewhere = Counter(r.second_from for r in rows if r.second_from)
        made = "".join(f", {count} of them {origin}" for origin, count in elsewhere.items())
        fallback = sum(r.verdict.mode == "golden" for r in rows)
        nearest = ""
        if self.nearest:  # each named once in a note above
            nearest = f"; {len(self.nearest)} kernel(s) took the nearest frozen case (notes above)"
        wall = time.perf_counter() - self.started
        processes = f"{self.jobs} process" + ("es" if self.jobs > 1 else "")
        self.console.print(
            f"{len(rows)} outputs of {len(self.results)} cases: {len(rows) - len(failed)} passed, "
            f"{len(failed)} failed; second reference: upstream for {len(rows) - by_torch}{made}, torch "
            f"in the case dtype for {by_torch} (upstream cannot run them); {fallback} passed only "
            f"by the RFC's fallback to the golden{nearest}; {wall:.1f} s with {processes}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _total(seconds: dict[str, float]) -> float:
    return sum(v for k, v in seconds.items() if k not in ("compile", "cases"))
