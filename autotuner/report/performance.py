"""`autotune report`: per op, performance case and part, the frozen speedup over the default, the
ratio to the GPU baseline, whether the frozen part is slower than the GPU beyond noise, the ratio
to torch eager on the same soc (what a user runs without the port), and the share of the
roofline, with geometric means; and the speedups `autotune freeze` recorded per (kernel, case).
Tables as pandas DataFrames.

From the database: the newest "port_default", "port_frozen" and "torch" baselines of the soc
(`autotune baseline`), the newest upstream baseline on a GPU (any soc), the newest stored
ceilings of the soc (`autotuner.report.roofline`). Interpreter times are never in it. From the committed performance
json: each frozen (kernel, case)'s verdict speedup, the frozen config re-timed interleaved with
the default when it was tuned.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

import pandas as pd
from sqlalchemy import select

from core.errors import UserError
from core.paths import performance_json
from core.socs import CPU, BackendKind, check_soc
from ops import all_ops
from storage import Baseline, Database

from ..atk.performance_json import frozen_sections, read
from ..measure.stats import mann_whitney_less
from ..settings import settings
from .outcomes import speedup
from .roofline import Ceilings, record_ceilings, share, stored_ceilings

#: The report's columns; shares are fractions (0.5 is half the ceiling).
COLUMNS = ("op", "case", "part", "soc", "moved_bytes", "flops", "default_ms", "frozen_ms",
           "speedup", "gpu_ms", "gpu_soc", "gpu_ratio", "gpu_verdict", "torch_ms", "torch_ratio",
           "default_bandwidth_share", "default_compute_share", "bandwidth_share", "compute_share",
           "roofline", "bound")  # fmt: skip
#: The columns a geometric mean summarises.
GEOMEAN_OF = ("speedup", "gpu_ratio", "torch_ratio", "roofline")
GEOMEAN = "geomean"
#: A frozen part is slower (or faster) than the GPU when its samples tend to be larger (smaller)
#: than upstream's with a one-sided Mann-Whitney p below this, however small the difference.
ALPHA = 0.01


def _newest_baselines(db: Database) -> pd.DataFrame:
    """The newest device (not interpreter) baseline of each (op, soc, case, part, source)."""
    query = select(
        Baseline.id, Baseline.op, Baseline.soc, Baseline.case_name, Baseline.part,
        Baseline.source, Baseline.backend, Baseline.median_ms, Baseline.samples,
        Baseline.measured_at,
    ).where(Baseline.interpreter.is_(False))  # fmt: skip
    with db.engine.connect() as connection:
        frame = pd.read_sql(query, connection)
    group = ["op", "soc", "case_name", "part", "source"]
    return frame.sort_values(["measured_at", "id"]).groupby(group).tail(1)


@dataclass(frozen=True)
class Committed:
    """A time the checkout's performance json holds (what `autotune freeze` wrote): a median,
    no samples, so no GPU verdict."""

    median_ms: float
    soc: str
    samples: None = None


def repository_times(soc: str, ops: list[str] | None = None) -> dict[tuple, Committed]:
    """(op, case, part, source) -> the performance json's time of each part that is one kernel
    frozen on `soc`: "port_default", "port_frozen" and "upstream" (its GPU baseline)."""
    times: dict[tuple, Committed] = {}
    for name, spec in all_ops().items():
        if ops and name not in ops or not performance_json(name).is_file():
            continue
        singles = {kernels[0]: part for part, kernels in spec.parts.items() if len(kernels) == 1}
        for case, by_soc in frozen_sections(read(performance_json(name))).items():
            for kernel, entry in by_soc.get(soc, {}).get("kernels", {}).items():
                if (part := singles.get(kernel)) is None:
                    continue
                for source, key, where in (("port_default", "default_ms", soc),
                                           ("port_frozen", "median_ms", soc),
                                           ("upstream", "gpu_baseline_ms", entry.get("gpu_baseline_soc"))):  # fmt: skip
                    if isinstance(entry.get(key), int | float) and where:
                        times[(name, case, part, source)] = Committed(entry[key], where)
    return times


def report_frame(
    db: Database, soc: str, ops: list[str] | None = None, ceilings: Ceilings | None = None
) -> pd.DataFrame:
    """One row per (op, performance case, part) of `soc` with a default or a frozen baseline, in
    the order of the ops' specs: the database's, or where it has no baseline of the port on
    `soc` (a fresh clone's), the checkout's performance json's."""
    newest = _newest_baselines(db)
    ours = newest[newest.soc == soc]
    fresh = not ours.source.isin(("port_default", "port_frozen")).any()
    committed = repository_times(soc, ops) if fresh else {}
    times = {key: t for key, t in committed.items() if key[3] != "upstream"}
    times |= {(r.op, r.case_name, r.part, r.source): r for r in ours.itertuples(index=False)}
    upstream = newest[(newest.source == "upstream") & (newest.backend == BackendKind.CUDA)]
    if gpu_soc := settings().gpu_soc:
        upstream = upstream[upstream.soc == gpu_soc]
        committed = {k: t for k, t in committed.items() if t.soc == gpu_soc}
    upstream = upstream.sort_values(["measured_at", "id"])  # the GPU baseline: a GPU's rows
    gpu = {key[:3]: t for key, t in committed.items() if key[3] == "upstream"}
    gpu |= {(r.op, r.case_name, r.part): r for r in upstream.itertuples(index=False)}  # newest last
    rows = []
    for name, spec in all_ops().items():
        if ops and name not in ops:
            continue
        for case in spec.cases("performance"):
            for part in spec.parts:
                default = times.get((name, case.name, part, "port_default"))
                frozen = times.get((name, case.name, part, "port_frozen"))
                if default is None and frozen is None:
                    continue
                row = _row(spec, case, part, soc, default, frozen, gpu, ceilings)
                eager = times.get((name, case.name, part, "torch"))
                if eager is not None:
                    row["torch_ms"] = eager.median_ms
                    row["torch_ratio"] = row["frozen_ms"] / eager.median_ms if frozen else None
                rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _row(spec, case, part, soc, default_row, frozen_row, gpu, ceilings) -> dict:
    default = default_row.median_ms if default_row is not None else None
    frozen = frozen_row.median_ms if frozen_row is not None else None
    try:
        moved, flops = spec.traffic(case, part)
    except NotImplementedError:
        moved = flops = None
    upstream = gpu.get((spec.name, case.name, part))
    row = {
        "op": spec.name, "case": case.name, "part": part, "soc": soc, "moved_bytes": moved,
        "flops": flops, "default_ms": default, "frozen_ms": frozen,
        "speedup": speedup(default, frozen),
        "gpu_ms": upstream.median_ms if upstream is not None else None,
        "gpu_soc": upstream.soc if upstream is not None else None,
    }  # fmt: skip
    row["gpu_ratio"] = frozen / row["gpu_ms"] if frozen and row["gpu_ms"] else None
    if frozen_row is not None and upstream is not None and frozen_row.samples and upstream.samples:
        row["gpu_verdict"] = gpu_verdict(frozen_row.samples, upstream.samples)
    if ceilings is not None:
        for prefix, ms in (("default_", default), ("", frozen)):
            reached = share(spec, case, part, ms, ceilings) if ms else None
            if reached is not None:
                row[f"{prefix}bandwidth_share"] = reached.bandwidth
                row[f"{prefix}compute_share"] = reached.compute
                if not prefix:
                    row["roofline"], row["bound"] = reached.bound, reached.bound_by
    return row


def gpu_verdict(frozen: list[float], upstream: list[float]) -> str:
    """The frozen part against the GPU: "slower" or "faster" where its samples tend to be larger
    or smaller than upstream's beyond noise (p < ALPHA), else "tie". Side by side when both come
    from one `autotune baseline` on the GPU (interleaved); across runs or devices otherwise."""
    if mann_whitney_less(upstream, frozen) < ALPHA:
        return "slower"
    if mann_whitney_less(frozen, upstream) < ALPHA:
        return "faster"
    return "tie"


def slower_than_gpu(frame: pd.DataFrame) -> str:
    """One line: the parts slower than the GPU beyond noise, or that none is, of those with a
    GPU baseline."""
    compared = frame[frame.gpu_verdict.notna()]
    if compared.empty:
        return "No part has both a frozen baseline and a GPU baseline to compare."
    slower = compared[compared.gpu_verdict == "slower"]
    rule = f"one-sided Mann-Whitney p < {ALPHA} on the samples"
    if slower.empty:
        return f"No frozen part is slower than the GPU ({len(compared)} compared; {rule})."
    names = "; ".join(
        f"{r.op} {r.case} {r.part} {r.gpu_ratio:.3f}" for r in slower.itertuples(index=False)
    )
    return f"Slower than the GPU, {len(slower)} of {len(compared)} parts ({rule}): {names}."


def geomean(values) -> float | None:
    """The geometric mean of the positive finite values; None if there are none."""
    kept = [float(v) for v in values if pd.notna(v) and 0 < float(v) < math.inf]
    return statistics.geometric_mean(kept) if kept else None


def with_geomeans(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows, each op followed by a `geomean` row of its speedup, GPU ratio and roofline share,
    and a last one over every row."""

    def summary(rows: pd.DataFrame, op: str) -> dict:
        return {"op": op, "case": GEOMEAN, **{c: geomean(rows[c]) for c in GEOMEAN_OF}}

    parts = []
    for op, rows in frame.groupby("op", sort=False):
        parts += [rows, pd.DataFrame([summary(rows, str(op))])]
    if not frame.empty:
        parts.append(pd.DataFrame([summary(frame, "all")]))
    return pd.concat(parts, ignore_index=True)[list(COLUMNS)] if parts else frame


def verdict_speedups(soc: str, ops: list[str] | None = None) -> pd.DataFrame:
    """The verdict speedup of every (kernel, case) of the ops frozen on `soc` (the performance
    json); entries without one (nothing frozen, or frozen on the interpreter) left out."""
    rows = []
    for name in ops or sorted(all_ops()):
        for case, by_soc in frozen_sections(read(performance_json(name))).items():
            for kernel, entry in by_soc.get(soc, {}).get("kernels", {}).items():
                if entry.get("speedup_over_default"):
                    rows.append((name, kernel, case, entry["speedup_over_default"]))
    return pd.DataFrame(rows, columns=["op", "kernel", "case", "speedup"])


def speedup_summary(speedups: pd.DataFrame) -> pd.DataFrame:
    """Per op and over all: how many (kernel, case) entries, their geomean, worst and best."""

    def summary(op: str, values: pd.Series) -> dict:
        return {"op": op, "entries": len(values), "geomean": geomean(values),
                "worst": values.min(), "best": values.max()}  # fmt: skip

    rows = [summary(str(op), group.speedup) for op, group in speedups.groupby("op", sort=False)]
    if not speedups.empty:
        rows.append(summary("all", speedups.speedup))
    return pd.DataFrame(rows, columns=["op", "entries", "geomean", "worst", "best"])


def report_socs(db: Database) -> list[str]:
    """The socs with device baselines of the port, in the database or the checkout."""
    query = (
        select(Baseline.soc)
        .where(
            Baseline.interpreter.is_(False), Baseline.source.in_(("port_default", "port_frozen"))
        )
        .distinct()
    )
    committed = {
        soc
        for name in all_ops()
        if performance_json(name).is_file()
        for by_soc in frozen_sections(read(performance_json(name))).values()
        for soc in by_soc
        if soc != CPU
    }
    with db.sessions() as session:
        return sorted(committed | set(session.scalars(query)))


def _ms(x) -> str:
    return "" if pd.isna(x) else f"{x:.4g}"


def _times(x) -> str:
    return "" if pd.isna(x) else f"{x:.3f}x"


def _percent(x) -> str:
    return "" if pd.isna(x) else f"{100 * x:.0f}%"


def display(frame: pd.DataFrame) -> pd.DataFrame:
    """The report's rows as a person reads them: times in ms, speedups, shares in percent."""
    return pd.DataFrame(
        {
            "op": frame.op,
            "case": frame.case,
            "part": frame.part.fillna(""),
            "default ms": frame.default_ms.map(_ms),
            "frozen ms": frame.frozen_ms.map(_ms),
            "speedup": frame.speedup.map(_times),
            "GPU ms": frame.gpu_ms.map(_ms),
            "frozen / GPU": frame.gpu_ratio.map(lambda x: "" if pd.isna(x) else f"{x:.3f}"),
            "vs GPU": frame.gpu_verdict.fillna(""),
            "torch ms": frame.torch_ms.map(_ms),
            "frozen / torch": frame.torch_ratio.map(lambda x: "" if pd.isna(x) else f"{x:.3f}"),
            "roofline": frame.roofline.map(_percent),
            "bound": frame.bound.fillna(""),
        }
    )


def markdown_report(
    db: Database, socs: list[str], ops: list[str] | None, ceilings: dict[str, Ceilings]
) -> str:
    """Per soc: its ceilings, the table with geomeans, and the verdict speedups per op."""
    from .tables import markdown

    out = []
    for soc in socs:
        frame = with_geomeans(report_frame(db, soc, ops, ceilings.get(soc)))
        out.append(f"## {soc}\n")
        if soc in ceilings:
            out.append(f"Ceilings: {ceilings[soc].describe()}. Roofline: the frozen time's share "
                       "of the ceiling that bounds (memory or compute).\n")  # fmt: skip
        else:
            out.append(f"No ceilings stored for {soc}: run `autotune report --soc {soc} --measure` "
                       "on the device for the roofline column.\n")  # fmt: skip
        out.append(markdown(display(frame)) if not frame.empty else "No baselines of the port.\n")
        if not frame.empty:
            out.append(slower_than_gpu(frame) + "\n")
        summary = speedup_summary(verdict_speedups(soc, ops))
        if not summary.empty:
            out.append("Speedups `autotune freeze` recorded per (kernel, case), frozen over the "
                       "default re-timed interleaved:\n")  # fmt: skip
            for column in ("geomean", "worst", "best"):
                summary[column] = summary[column].map(_times)
            out.append(markdown(summary))
    return "\n".join(out)


def report_text(
    db: Database, soc: str | None, ops: list[str], fmt: str, measure: bool = False
) -> str:
    """The report of a soc (every soc with device baselines if None) as Markdown or CSV;
    `measure`: first measure and store the ceilings of this machine's device of `soc`."""
    if fmt not in ("md", "csv"):
        raise UserError(f"unknown --format {fmt!r}; use md or csv")
    if soc == CPU:
        raise UserError("interpreter times are not performance numbers: report on a device soc")
    if soc is not None:
        check_soc(soc)
    if measure:
        from ..backends import get_backend

        soc = record_ceilings(db, get_backend(soc)).soc
    socs = [soc] if soc else report_socs(db)
    ceilings = stored_ceilings(db)
    if fmt == "csv":
        frames = [with_geomeans(report_frame(db, s, ops, ceilings.get(s))) for s in socs]
        return pd.concat(frames).to_csv(index=False) if frames else ",".join(COLUMNS) + "\n"
    if not socs:
        return "No device baselines of the port yet (`autotune baseline` on a device).\n"
    return markdown_report(db, socs, ops or None, ceilings)
