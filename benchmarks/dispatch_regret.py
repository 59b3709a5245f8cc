"""What the launchers' pick costs on shapes nobody tuned: dispatch regret on held-out shapes.

For each op:kernel with configs frozen for the soc (the port file's generated block):
1. held-out shapes: `--shapes` per kernel, drawn (seeded) around the op's cases of the soc's
   kind, each key scaled by 1/2, 3/4, 1, 3/2 or 2 (at least one key changed), no larger in
   elements than the largest of those cases, in one of the op's dtypes, with the built-in skew
   of lengths, and never a frozen (shape, dtype);
2. per shape: an exhaustive `autotune run` (`--trials`, default every feasible config) into a
   scratch database gives the optimum;
3. the optimum, the config the launchers pick now (`ops.ports.picked_config`) and the one the port
   of an earlier checkout picks (`--before ROOT`: its block, frozen configs and pick rule) are
   checked and re-timed interleaved in one worker (`--rounds` of `--reps` calls); regret =
   picked median / optimum median - 1 (inf where the pick fails on the shape).
`--optimum-from ROWS` takes a shape's optimum and table from an earlier run's row instead of
measuring the space again: a change of the frozen set is then re-measured in minutes.
Rows go to OUT/dispatch_regret.jsonl as they are made; `--report FILE` prints per op:kernel the
geomean and worst regret, before and after, as Markdown.

    python benchmarks/dispatch_regret.py --soc H200 --out out/dispatch \\
        --target jagged_dense_flash_attention:fwd --target jagged_dense_bmm:fwd \\
        --target jagged_to_padded_dense:fwd --shapes 4 --before ../before

where `../before` is the earlier state, e.g. `git worktree add ../before REV`.

`--smoke` lets it run on `--soc cpu` (the interpreter) to check the script: those times are not
performance numbers.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
from pathlib import Path
from types import ModuleType
from typing import Any

import optuna
from optuna.trial import TrialState

from autotuner.atk.generated_block import nearest_warning, read_frozen
from autotuner.backends import SocProfile, get_backend, spec_here
from autotuner.measure.environment import run_header
from autotuner.search import runner
from autotuner.search.request import RunRequest
from autotuner.search.space import config_key
from autotuner.search.study import Plan
from autotuner.search.workers import Worker, WorkerLost
from core.modules import load_file
from core.paths import port_file
from ops import all_ops, get_op
from ops.jagged import skewed_lengths
from ops.ports import load_port, picked_config
from ops.spec import Case, OpSpec

SCALES = (0.5, 0.75, 1.0, 1.5, 2.0)
#: What `exhaustive` finds on a shape, as a row keeps it.
EXHAUSTIVE_FIELDS = ("space", "measured", "complete", "optimum", "optimum_trial_ms", "table")


def frozen_entries(op: str, soc: str) -> dict[str, list[dict[str, Any]]]:
    """kernel -> the entries frozen for the soc, as the port file's block lists them."""
    path = port_file(op)
    return read_frozen(path.read_text(encoding="utf-8"), path).get(soc, {})


def held_out(
    spec: OpSpec, entries: list[dict[str, Any]], kind: str, count: int, seed: int
) -> list[Case]:
    """`count` shapes near the op's cases of `kind`, none of them frozen (see the docstring)."""
    rng = random.Random(f"{spec.name}/{seed}")
    bases = spec.cases(kind)  # type: ignore[arg-type]
    largest = max(math.prod(c.shape.values()) for c in bases)
    dtypes = list(spec.dtypes)
    frozen = {(json.dumps(e["shape"], sort_keys=True), e["dtype"]) for e in entries}
    found: dict[str, Case] = {}
    for _ in range(1000 * count):
        if len(found) == count:
            break
        base = rng.choice(bases)
        shape = {k: max(1, round(v * rng.choice(SCALES))) for k, v in base.shape.items()}
        dtype = rng.choice(dtypes)
        if (
            shape == base.shape
            or math.prod(shape.values()) > largest
            or (json.dumps(shape, sort_keys=True), dtype) in frozen
        ):
            continue
        try:
            case = spec.make_case(
                shape, dtype, skewed_lengths(shape["B"], shape["max_seq_len"]), kind
            )
        except ValueError:  # a key the op constrains (jagged2_softmax's dim)
            continue
        found.setdefault(case.name, case)
    return list(found.values())


def before_port(op: str, root: Path | None) -> ModuleType:
    """The port of `op` in the checkout at `root` (None: this one), loaded beside the current."""
    path = port_file(op, root)
    if not path.is_file():
        raise SystemExit(f"--before {root}: no port of {op} at {path}")
    return load_file(f"_dispatch_regret_before.{op}", path)


def recorded_optima(paths: list[Path]) -> dict[tuple[str, str, str, str], dict[str, Any]]:
    """(op, kernel, case, soc) -> the exhaustive fields of an earlier row (the last one wins)."""
    found = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if "table" in row:
                key = (row["op"], row["kernel"], row["case"], row["soc"])
                found[key] = {k: row[k] for k in EXHAUSTIVE_FIELDS} | {"optimum_from": path.name}
    return found


def current_pick(port, soc: str, kernel: str, shape: dict, dtype: str, default: dict):
    """(config, frozen case) of the launchers' pick (`ops.ports.picked_config`)."""
    config, said = picked_config(port, soc, kernel, shape, dtype, default)
    entries = port.FROZEN_CONFIGS.get(soc, {}).get(kernel, [])
    exact = next((e["case"] for e in entries if e["dtype"] == dtype and e["shape"] == shape), None)
    named = [w.case for w in said if nearest_warning(w)]  # the block's NearestFrozenCase
    return config, named[0] if named else exact or "default"


def exhaustive(
    spec: OpSpec, kernel: str, case: Case, soc: str, trials: float, db_url: str
) -> dict[str, Any]:
    """Every feasible config (or `trials` of them) measured: the optimum and the table."""
    (record,) = runner.run(
        RunRequest(
            spec.name,
            soc,
            kernels=[kernel],
            cases=[],
            trials=trials,
            db_url=db_url,
            timeout_s=300,
            extra=(case,),
        )
    )
    trials_ = optuna.load_study(study_name=record.name, storage=db_url).get_trials(deepcopy=False)
    complete = [t for t in trials_ if t.state == TrialState.COMPLETE]
    best = min(complete, key=lambda t: t.value)
    return {
        "space": record.feasible_size,
        "measured": len(trials_),
        "complete": len(complete),
        "optimum": best.user_attrs["config"],
        "optimum_trial_ms": best.value,
        # every config that ran, fastest first: a later pick rule can be scored on it offline
        "table": sorted(([t.user_attrs["config"], t.value] for t in complete), key=lambda r: r[1]),
    }


def retime(
    spec: OpSpec,
    kernel: str,
    case: Case,
    soc: str,
    configs: dict[str, dict],
    rounds: int,
    reps: int,
) -> dict[str, dict[str, Any]]:
    """Per named config: checked against the golden once, then median of interleaved samples
    (ms); a config that fails on the case gets its failure instead."""
    worker = Worker(spec_here(soc))
    results: dict[str, dict[str, Any]] = {}
    try:
        worker.prepare(spec.name, kernel, case, 900)
        unique = {config_key(c): c for c in configs.values()}
        failed: dict[str, str] = {}
        for key, config in unique.items():
            try:
                outcome = worker.call(("measure", config), 300)
            except WorkerLost as lost:
                outcome = {"ok": False, "category": lost.category, "message": str(lost)}
                worker.prepare(spec.name, kernel, case, 900)
            if not outcome["ok"]:
                failed[key] = f"{outcome['category']}: {outcome['message']}"
        samples: dict[str, list[float]] = {key: [] for key in unique if key not in failed}
        for _ in range(rounds):
            for key in samples:
                samples[key] += worker.call(("samples", unique[key], reps), 300)
    finally:
        worker.close()
    for name, config in configs.items():
        key = config_key(config)
        results[name] = (
            {"config": config, "failed": failed[key]}
            if key in failed
            else {"config": config, "median_ms": statistics.median(samples[key])}
        )
    return results


def regret(picked: dict[str, Any], optimum: dict[str, Any]) -> float:
    if "median_ms" not in picked or "median_ms" not in optimum:
        return math.inf
    return picked["median_ms"] / optimum["median_ms"] - 1


def benchmark(op: str, kernel: str, args: argparse.Namespace, sink, recorded) -> None:
    spec, backend = get_op(op), get_backend(args.soc)
    entries = frozen_entries(op, backend.soc).get(kernel)
    if not entries:
        raise SystemExit(f"nothing of {op}:{kernel} is frozen for {backend.soc}")
    port, earlier = load_port(op), before_port(op, args.before)
    kind = runner.case_kind(backend)
    drawn = held_out(spec, entries, kind, args.shapes, args.seed)
    for case in [c for i, c in enumerate(drawn) if args.which is None or i in args.which]:
        plan = Plan.make(spec, spec.kernel(kernel), case, backend.soc, SocProfile.of(backend), 1.0)
        shape, default = dict(case.shape), port.default_config(kernel, dict(case.shape))
        picks = {
            "before": current_pick(earlier, backend.soc, kernel, shape, case.dtype, default),
            "after": current_pick(port, backend.soc, kernel, shape, case.dtype, default),
        }
        found = recorded.get((op, kernel, case.name, backend.soc)) or exhaustive(
            spec,
            kernel,
            case,
            backend.soc,
            args.trials,
            f"sqlite:///{args.out / 'dispatch_regret.db'}",
        )
        # The picks as the launcher runs them: the study's space completes what they leave out.
        configs = {"optimum": found["optimum"]} | {
            side: plan.space.complete(config) for side, (config, _) in picks.items()
        }
        timed = retime(spec, kernel, case, backend.soc, configs, args.rounds, args.reps)
        row = {
            "op": op,
            "kernel": kernel,
            "case": case.name,
            "shape": case.shape,
            "dtype": case.dtype,
            "soc": backend.soc,
            "interpreter": backend.is_interpreter,
            **found,
            "optimum_ms": timed["optimum"].get("median_ms"),
        }
        for side, (_, source) in picks.items():
            row[side] = {
                **timed[side],
                "from": source,
                # the kernel's own constraints on the case: the plan's space has been narrowed
                # to the bounds, so its rejected list never names a block over one
                "static_violation": spec.kernel(kernel).violation(
                    configs[side], case, backend.limits
                ),
                "regret": regret(timed[side], timed["optimum"]),
            }
        sink.write(json.dumps(row) + "\n")
        sink.flush()


def geomean_regret(regrets: list[float]) -> float:
    if any(math.isinf(r) for r in regrets):
        return math.inf
    return math.exp(statistics.fmean(math.log1p(max(r, -0.999)) for r in regrets)) - 1


def report(paths: list[Path]) -> str:
    rows = [
        json.loads(line)
        for path in paths
        for line in path.read_text().splitlines()
        if '"kernel"' in line
    ]
    text = "| op:kernel | held-out case | optimum ms | before: from | regret | after: from | regret |\n|---|---|---|---|---|---|---|\n"
    for r in rows:
        b, a = r["before"], r["after"]
        text += (f"| {r['op']}:{r['kernel']} | {r['case']} | {r['optimum_ms'] or math.nan:.4f} | "
                 f"{b['from']} | {b['regret']:+.1%} | {a['from']} | {a['regret']:+.1%} |\n")  # fmt: skip
    text += "\n| op:kernel | shapes | geomean regret before | worst before | geomean regret after | worst after |\n|---|---|---|---|---|---|\n"
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(f"{r['op']}:{r['kernel']}", []).append(r)
    for name, group in [*groups.items(), ("all", rows)] if rows else []:
        before = [r["before"]["regret"] for r in group]
        after = [r["after"]["regret"] for r in group]
        text += (f"| {name} | {len(group)} | {geomean_regret(before):+.1%} | {max(before):+.1%} | "
                 f"{geomean_regret(after):+.1%} | {max(after):+.1%} |\n")  # fmt: skip
    if any(r["interpreter"] for r in rows):
        text += "\nInterpreter times (`--smoke`): they check the script, they are not performance numbers.\n"
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--soc")
    parser.add_argument("--out", type=Path, default=Path("out/dispatch_regret"))
    parser.add_argument("--target", action="append", default=[], help="op:kernel (repeatable)")
    parser.add_argument("--shapes", type=int, default=4, help="held-out shapes per op:kernel")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--before",
        type=Path,
        help="an earlier checkout (e.g. `git worktree add ../before REV`) whose ports' picks are "
        "the before (default: this one, so before = after)",
    )
    parser.add_argument(
        "--optimum-from",
        type=Path,
        nargs="+",
        default=[],
        help="earlier output rows: a shape found there is re-timed against its recorded optimum "
        "instead of measuring its space again",
    )
    parser.add_argument(
        "--which",
        type=lambda text: {int(i) for i in text.split(",")},
        help="only these of the drawn shapes, 0-based (e.g. 2,3): split a run across GPUs or "
        "resume one cut short",
    )
    parser.add_argument(
        "--trials",
        type=lambda t: float(t[:-1]) / 100 if t.endswith("%") else int(t),
        default=1.0,
        help="configs measured per held-out shape: a number or a share (default 100%%)",
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="allow the interpreter")
    parser.add_argument("--report", type=Path, nargs="+", help="print the Markdown tables, exit")
    args = parser.parse_args(argv)
    if args.report:
        print(report(args.report))
        return
    backend = get_backend(args.soc)
    if backend.is_interpreter and not args.smoke:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    targets = args.target or [
        f"{op}:{kernel}" for op in all_ops() for kernel in frozen_entries(op, backend.soc)
    ]
    recorded = recorded_optima(args.optimum_from)
    args.out.mkdir(parents=True, exist_ok=True)
    with (args.out / "dispatch_regret.jsonl").open("a") as sink:
        header = run_header(backend, backend.is_interpreter)
        sink.write(json.dumps({"header": header, "before": str(args.before or ".")}) + "\n")
        for target in targets:
            op, _, kernel = target.partition(":")
            benchmark(op, kernel, args, sink, recorded)


if __name__ == "__main__":
    main()
