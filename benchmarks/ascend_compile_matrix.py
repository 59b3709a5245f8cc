"""The Ascend compile matrix: what the real compiler says of every port kernel's configs, against
the static on-chip model, without an NPU (issue 25).

Two parts, each a set of (kernel, case, soc, config) compiled through `autotune space --compile`'s
path (`autotuner.search.compiles`: triton-ascend's pipeline and ascendnpu-ir's bishengir, every
verdict kept in `--db`, so a run resumes from what an earlier one compiled):

- `space`: every config of the search space of each kernel's first performance case, for `--socs`
  (default 910B and 950PR);
- `cases`: the default config and the configs frozen for the soc of every case, accuracy and
  performance, for all four socs.

One JSON row per config goes to `--out` as it is judged: the model's verdict then (the on-chip
model and the launch limits), the compiler's (category, message, required bits, planned memory,
seconds, from the database or compiled now). `--summary FILE...` prints, from rows, the tables of
docs/benchmarks.md: per soc the model against the compiler, what each side lost, compile errors by
kernel, the time per compile. "Planned" is the compiler's word for a config its every pass
accepted, memory planning included; without CANN nothing was generated and nothing ran.

    .venv-ascend/bin/python benchmarks/ascend_compile_matrix.py --part space --db sqlite:///compiles.db \\
        --out docs/runs/DATE_issue25_ascend_compile_matrix_space.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import statistics
import sys
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from autotuner.backends import soc_profile
from autotuner.backends.compile import compile_socs
from autotuner.search.compiles import CompileFarm
from autotuner.search.space import config_key, space_for
from autotuner.search.warm_starts import from_frozen
from ops import all_ops, get_op
from ops.spec import Case, Config, KernelSpec
from storage import open_database

OK = ("planned", "compiled", "no_launch")


def _sample(configs: list[Config], share: float) -> list[Config]:
    """A fixed share of a space: the configs whose key hashes lowest, so a larger share holds a
    smaller one's configs (a run resumes from what it compiled) and every config has its turn."""
    ranked = sorted(configs, key=lambda c: hashlib.sha256(config_key(c).encode()).hexdigest())
    return ranked[: max(1, math.ceil(share * len(configs)))]


def _jobs(
    part: str, socs: list[str], ops: list[str], share: float = 1.0
) -> list[tuple[str, KernelSpec, Case, str, list[Config]]]:
    """(op, kernel, case, soc, configs) to compile, in order."""
    out = []
    for soc in socs:
        profile = soc_profile(soc)
        for name in ops:
            spec = get_op(name)
            cases = (
                spec.cases("performance")[:1]
                if part == "space"
                else [*spec.cases("accuracy"), *spec.cases("performance")]
            )
            for kernel in spec.kernels:
                space = space_for(kernel, profile.launch_options, profile.option_defaults)
                frozen = [s for s in from_frozen(name, kernel.name) if s.soc == soc]
                for case in cases:
                    if part == "space":
                        configs = _sample(list(space.configs()), share)
                    else:
                        mine = [s.config for s in frozen if s.case == case.name]
                        completed = [space.complete(c) for c in [kernel.default(case), *mine]]
                        configs = list({config_key(c): c for c in completed}.values())
                    out.append((name, kernel, case, soc, configs))
    return out


def _done(path: str) -> set[tuple[str, str, str, str, str]]:
    """(op, kernel, case, soc, config key) of the rows already in `path`."""
    if not Path(path).is_file():
        return set()
    rows = (json.loads(line) for line in Path(path).read_text().splitlines())
    return {(r["op"], r["kernel"], r["case"], r["soc"], config_key(r["config"])) for r in rows}


def run(args: argparse.Namespace) -> None:
    """Each soc's jobs in a thread of their own (its farm's processes compile; a case's inputs,
    minutes for a large backward case, are built per process), accuracy cases first; a job whose
    rows are all in `--out` already is skipped."""
    db = open_database(args.db)
    ops = args.op or list(all_ops())
    socs = args.socs.split(",")
    done = _done(args.out)
    lock = threading.Lock()
    jobs = [
        job
        for job in _jobs(args.part, socs, ops, args.share)
        if any(
            (job[0], job[1].name, job[2].name, job[3], config_key(c)) not in done for c in job[4]
        )
    ]
    jobs.sort(key=lambda job: job[2].kind == "performance")  # stable: the kernels' order kept

    def compile_soc(soc: str, out: TextIO) -> None:
        limits = soc_profile(soc).limits
        with CompileFarm(db, soc, args.jobs, args.timeout) as farm:
            for op, kernel, case, _, configs in (job for job in jobs if job[3] == soc):
                default = space_default(kernel, case, soc)
                started = time.monotonic()
                verdicts = farm.compile(op, kernel.name, case, configs)
                rows = []
                for config in configs:
                    _, result, cached = verdicts[config_key(config)]
                    rows.append({
                        "part": args.part, "op": op, "kernel": kernel.name, "case": case.name,
                        "soc": soc, "compiler": farm.compiler.describe(), "config": config,
                        "model": kernel.on_chip_violation(config, case, limits),
                        "launch": kernel.launch_violation(config, case, limits),
                        "default": config == default,
                        "cached": cached, **result.as_dict(),
                    })  # fmt: skip
                with lock:
                    out.writelines(json.dumps(row) + "\n" for row in rows)
                    out.flush()
                    print(
                        f"{soc} {op}:{kernel.name} {case.name}: {len(configs)} configs in "
                        f"{time.monotonic() - started:.0f} s",
                        file=sys.stderr,
                        flush=True,
                    )

    with open(args.out, "a", encoding="utf-8") as out, ThreadPoolExecutor(len(socs)) as pool:
        for future in [pool.submit(compile_soc, soc, out) for soc in socs]:
            future.result()


def space_default(kernel: KernelSpec, case: Case, soc: str) -> Config:
    profile = soc_profile(soc)
    return space_for(kernel, profile.launch_options, profile.option_defaults).complete(
        kernel.default(case)
    )


def _no_launch(row: dict[str, Any]) -> bool:
    """A config that launches no kernel on its case (rows before the `no_launch` verdict say so
    in their message)."""
    return row["category"] == "no_launch" or row["message"] == "the launcher launched no kernel"


def _column(row: dict[str, Any]) -> str:
    """planned (as asked), dropped (planned once the compiler turned multibuffer off), refused."""
    if row["category"] not in OK:
        return "refused"
    return "dropped" if row["multibuffer_dropped"] else "planned"


def _model_now(
    row: dict[str, Any], cases: dict[tuple[str, str], Case]
) -> tuple[str | None, str | None]:
    """This checkout's on-chip model and launch limits on a row's config (a row keeps those it
    ran with)."""
    spec = get_op(row["op"])
    if (row["op"], row["case"]) not in cases:
        cases[row["op"], row["case"]] = spec.case(row["case"])
    case, limits = cases[row["op"], row["case"]], soc_profile(row["soc"]).limits
    kernel = spec.kernel(row["kernel"])
    return (
        kernel.on_chip_violation(row["config"], case, limits),
        kernel.launch_violation(row["config"], case, limits),
    )


def _lines(path: str) -> list[str]:
    """The rows of a file, gzipped (`.gz`, as docs/runs keeps the large ones) or not."""
    if path.endswith(".gz"):
        return gzip.decompress(Path(path).read_bytes()).decode("utf-8").splitlines()
    return Path(path).read_text(encoding="utf-8").splitlines()


def summary(paths: list[str]) -> str:
    """Markdown tables of rows: per soc the model (the one the rows were judged by, and this
    checkout's) against the compiler, and where they differ."""
    unique = {}
    for path in paths:
        for line in _lines(path):
            row = json.loads(line)  # a resumed run writes a config's row again: the last counts
            unique[row["op"], row["kernel"], row["case"], row["soc"], config_key(row["config"])] = (
                row
            )
    rows = list(unique.values())
    cases: dict[tuple[str, str], Case] = {}
    for row in rows:
        row["model_now"], row["launch_now"] = _model_now(row, cases)
    lines: list[str] = []
    for soc in sorted({r["soc"] for r in rows}, key=compile_socs().index):
        everything = [r for r in rows if r["soc"] == soc]
        mine = [r for r in everything if r["launch_now"] is None and not _no_launch(r)]
        lines += [
            f"### {soc}: {everything[0]['compiler']}",
            "",
            f"{len(everything)} configs; {len(everything) - len(mine)} of them over a launch limit "
            "or a constraint of the op (a grid over 65535 blocks, a block over its dimension), "
            "which a search never compiles, or launching no kernel on their case (no rows), are "
            "left out of the table.",
            "",
        ]
        lines += [
            "| model | verdict | planned | planned, multibuffer dropped | refused |",
            "|---|---|---|---|---|",
        ]
        for which, key in (("at the run", "model"), ("now", "model_now")):
            for verdict, accepts in (("accepts", True), ("rejects", False)):
                count = Counter(_column(r) for r in mine if (r[key] is None) == accepts)
                lines.append(
                    f"| {which} | {verdict} | {count['planned']} | {count['dropped']} | "
                    f"{count['refused']} |"
                )
        lost = Counter(
            f"{r['op']}:{r['kernel']}" for r in mine if r["model_now"] and _column(r) == "planned"
        )
        caught = Counter(
            f"{r['op']}:{r['kernel']} ({r['category']})"
            for r in mine if r["model_now"] is None and _column(r) == "refused"
        )  # fmt: skip
        lines += ["", "Planned by the compiler, rejected by the model now: "
                  + (", ".join(f"{k} {v}" for k, v in sorted(lost.items())) or "none") + "."]  # fmt: skip
        lines.append(
            "Refused by the compiler, accepted by the model now (the compile step catches them "
            "before any timing): " + (", ".join(f"{k} {v}" for k, v in sorted(caught.items())) or "none") + "."
        )  # fmt: skip
        defaults = [r for r in everything if r["default"]]
        if defaults:
            refused = Counter(
                f"{r['op']}:{r['kernel']} ({r['category']})"
                for r in defaults if r["category"] not in OK
            )  # fmt: skip
            lines.append(
                f"Default configs: {len(defaults)}, of them refused by the compiler: "
                + (", ".join(f"{k} {v}" for k, v in sorted(refused.items())) or "none") + "."
            )  # fmt: skip
        errors: dict[str, Counter] = defaultdict(Counter)
        for r in mine:
            if r["category"] not in OK and not r["category"].endswith("overflow"):
                errors[f"{r['op']}:{r['kernel']}"][f"{r['category']}: {r['message'][:150]}"] += 1
        if errors:
            lines += ["", "Refusals other than memory:", ""]
            for kernel, messages in sorted(errors.items()):
                for message, count in messages.most_common():
                    lines.append(f"- {kernel}: {count} x `{message}`")
        compiled = [r["seconds"] for r in mine if not r["cached"] and r["seconds"] > 0]
        if len(compiled) > 1:
            lines += ["", f"{len(mine)} configs, {len(compiled)} compiled (the others' keys "
                      f"were compiled already): median {statistics.median(compiled):.2f} s, p90 "
                      f"{statistics.quantiles(compiled, n=10)[-1]:.2f} s per compile."]  # fmt: skip
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--part", choices=("space", "cases"), default="space")
    parser.add_argument(
        "--socs", default=None, help="comma-separated (space: 910B,950PR; cases: all four)"
    )
    parser.add_argument("--op", action="append", help="only these ops (repeatable)")
    parser.add_argument("--db", default="sqlite:///ascend_compiles.db")
    parser.add_argument("--out", help="JSON lines, appended")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--share", type=float, default=1.0, help="space: this share of each kernel's configs"
    )
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument(
        "--summary", nargs="+", metavar="ROWS", help="print the tables of these rows"
    )
    args = parser.parse_args()
    if args.summary:
        print(summary(args.summary))
        return
    if not args.out:
        parser.error("--out is needed to compile")
    args.socs = args.socs or ("910B,950PR" if args.part == "space" else ",".join(compile_socs()))
    run(args)


if __name__ == "__main__":
    main()
