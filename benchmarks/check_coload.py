"""Does `autotune check` tell a regression from a shared GPU? Issue 50's validation, on one GPU:

1. `baseline`: `autotune baseline --profile` of the ops on a quiet device (OUT/baseline.txt);
2. `quiet`, `loaded`: on the unchanged tree, `autotune check --json` of every op, quiet and beside
   a second process running bf16 4096x4096 matmuls in bursts with random pauses
   (benchmarks/gpu_coload.py): every verdict counted; the target is 0 `regressed`;
3. `slower_quiet`, `slower_loaded`: the frozen configs swapped for slower neighbours (num_warps
   halved, benchmarks/slow_configs.py --neighbour; the port files are given back afterwards),
   checked quiet (each part's own slowdown, the injected one) and loaded: the target is that no
   part slowed by >= 10% quiet comes back `ok` loaded.

Raw output under OUT: check_<phase>_<op>.json (the check's JSON), check_<phase>.err,
exit_codes.txt, coload_<phase>.txt, slow_configs.txt, times.txt, and summary.json/summary.txt
(the counts, the slowed parts and the two targets). Checks stop being started once `--budget-s`
is spent (what ran is summarised; the rest is listed as not run), so a call fits the device's 10
minutes; `--phases` runs some phases, `--db` reuses an earlier call's baselines.

    python benchmarks/check_coload.py --soc H200 --out OUT [--ops OP ...] [--phases ...]
        [--db sqlite:///OUT/coload.db] [--budget-s 540]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from core.paths import port_file
from ops import all_ops

PHASES = ("baseline", "quiet", "loaded", "slower_quiet", "slower_loaded")
#: A part is an injected slowdown the loaded check must not call ok from this own slowdown on.
SLOWED = 0.10
HERE = Path(__file__).resolve().parent


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args, self.out = args, Path(args.out)
        self.start = time.monotonic()
        self.not_run: list[str] = []

    def left_s(self) -> float:
        return self.args.budget_s - (time.monotonic() - self.start)

    def note_time(self, what: str) -> None:
        with open(self.out / "times.txt", "a", encoding="utf-8") as f:
            f.write(f"{what}: {time.monotonic() - self.start:.0f} s\n")

    def autotune(self, *argv: str, stdout: Path, stderr: Path) -> int:
        command = [sys.executable, "-m", "autotuner", *argv, "--soc", self.args.soc,
                   "--db", self.args.db]  # fmt: skip
        with open(stdout, "w") as out, open(stderr, "a") as err:
            timeout = max(1.0, self.left_s())
            try:
                return subprocess.run(command, stdout=out, stderr=err, timeout=timeout).returncode
            except subprocess.TimeoutExpired:
                err.write(f"timed out after {timeout:.0f} s (budget)\n")
                return 124

    def baseline(self) -> None:
        ops = [a for op in self.args.ops for a in ("--op", op)]
        code = self.autotune("baseline", *ops, "--profile", stdout=self.out / "baseline.txt",
                             stderr=self.out / "baseline.txt.err")  # fmt: skip
        self.note_time(f"baseline exit {code}")

    def checks(self, phase: str) -> None:
        for op in self.args.ops:
            if self.left_s() < 5:
                self.not_run.append(f"{phase} {op}")
                continue
            code = self.autotune("check", "--op", op, "--json",
                                 stdout=self.out / f"check_{phase}_{op}.json",
                                 stderr=self.out / f"check_{phase}.err")  # fmt: skip
            with open(self.out / "exit_codes.txt", "a", encoding="utf-8") as f:
                f.write(f"{phase} {op} exit {code}\n")
        self.note_time(phase)

    def loaded(self, phase: str) -> None:
        log = open(self.out / f"coload_{phase}.txt", "w")  # noqa: SIM115 (the load's lifetime)
        load = subprocess.Popen([sys.executable, str(HERE / "gpu_coload.py")], stdout=log,
                                stderr=subprocess.STDOUT)  # fmt: skip
        try:
            time.sleep(2)  # its first bursts running
            self.checks(phase)
        finally:
            load.terminate()
            load.wait(timeout=30)
            log.close()


def slow_down(soc: str, ops: list[str], out: Path) -> dict[Path, str]:
    """Swap the ops' frozen configs for slower neighbours; the port files' old text by path."""
    kept = {port_file(op): port_file(op).read_text(encoding="utf-8") for op in ops}
    with open(out / "slow_configs.txt", "w") as log:
        command = [sys.executable, str(HERE / "slow_configs.py"), "--soc", soc, "--neighbour", *ops]
        subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, check=True)
    return kept


def verdicts(out: Path, phase: str, op: str) -> list[dict]:
    path = out / f"check_{phase}_{op}.json"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    except json.JSONDecodeError:
        return []


def summary(out: Path, ops: list[str], not_run: list[str]) -> dict:
    counts = {
        phase: dict(Counter(v["outcome"] for op in ops for v in verdicts(out, phase, op)))
        for phase in PHASES[1:]
    }
    slowed = []
    for op in ops:
        loaded = {(v["case"], v["part"]): v for v in verdicts(out, "slower_loaded", op)}
        for v in verdicts(out, "slower_quiet", op):
            under_load = loaded.get((v["case"], v["part"]))
            slowed.append({
                "op": op, "case": v["case"], "part": v["part"],
                "quiet_slowdown": v["absolute_change"], "quiet_ratio_change": v["change"],
                "quiet": v["outcome"],
                "loaded": under_load["outcome"] if under_load else None,
                "loaded_contention": under_load["contention"] if under_load else None,
            })  # fmt: skip
    missed = [s for s in slowed if s["quiet_slowdown"] >= SLOWED and s["loaded"] == "ok"]
    return {
        "counts": counts,
        "unchanged_regressed": sum(counts[p].get("regressed", 0) for p in ("quiet", "loaded")),
        "slowed_parts": slowed,
        f"slowed_{SLOWED:.0%}_reported_ok_loaded": missed,
        "not_run": not_run,
    }


def write_summary(out: Path, result: dict) -> None:
    (out / "summary.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    lines = [f"{phase}: {counts}" for phase, counts in result["counts"].items()]
    lines.append(f"unchanged tree, regressed (quiet + loaded): {result['unchanged_regressed']}")
    for s in result["slowed_parts"]:
        lines.append(
            f"slowed {s['op']} {s['case']} {s['part']}: quiet {s['quiet_slowdown']:+.1%} "
            f"({s['quiet']}), loaded {s['loaded']}"
        )
    missed = result[f"slowed_{SLOWED:.0%}_reported_ok_loaded"]
    lines.append(f"parts slowed >= {SLOWED:.0%} quiet and ok loaded: {len(missed)}")
    lines += [f"not run (budget): {what}" for what in result["not_run"]]
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--ops", nargs="+", default=sorted(all_ops()), help="default: every op")
    parser.add_argument("--phases", nargs="+", default=list(PHASES), choices=PHASES)
    parser.add_argument("--db", default=None, help="default: sqlite:///OUT/coload.db")
    parser.add_argument("--budget-s", type=float, default=540.0)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    args.db = args.db or f"sqlite:///{out.resolve()}/coload.db"
    run = Run(args)
    if "baseline" in args.phases:
        run.baseline()
    if "quiet" in args.phases:
        run.checks("quiet")
    if "loaded" in args.phases:
        run.loaded("loaded")
    if {"slower_quiet", "slower_loaded"} & set(args.phases):
        kept = slow_down(args.soc, args.ops, out)
        try:
            if "slower_quiet" in args.phases:
                run.checks("slower_quiet")
            if "slower_loaded" in args.phases:
                run.loaded("slower_loaded")
        finally:
            for path, text in kept.items():
                path.write_text(text, encoding="utf-8")
    write_summary(out, summary(out, args.ops, run.not_run))


if __name__ == "__main__":
    main()
