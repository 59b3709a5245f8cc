"""The persistent grid of the kernels with a program count (`ops.tunable.PROGRAMS`): verified at
every value, then timed against the classic grid interleaved, by the search's A/B rule.

For each kernel with a PROGRAMS tunable and each of its cases: the float64 CPU golden once, then
the kernel at every program count (its config: the soc's frozen one for the case, else the
default), whose outputs must be the classic grid's bit for bit and pass against the golden as
`autotune verify` judges a port alone (or fail it as the classic grid does). On a device,
performance cases are then timed: every program count interleaved with the classic grid (0), in
`--rounds` rounds of `--reps` calls, and a value wins where it is at least 1% faster with a
one-sided Mann-Whitney p < 0.01 (`measure.stats.faster_beyond_noise`, the rule a search winner
passes against the default), loses where the classic grid wins by that rule, else ties.

    python benchmarks/persistent_grid.py --soc H200 [--op OP ...] [--cases all]

On `cpu` (the interpreter) it verifies only: interpreter times are no performance.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

import torch

from autotuner.backends import Backend, get_backend
from autotuner.measure.accuracy import judge, measure
from autotuner.measure.stats import faster_beyond_noise
from autotuner.search.settle import frozen_config
from autotuner.search.space import space_for
from ops import all_ops
from ops.spec import Case, Config, KernelSpec, OpSpec
from ops.tunable import PROGRAMS

MIN_GAIN, ALPHA = 0.01, 0.01


def persistent_kernels(ops: list[str] | None = None) -> list[tuple[OpSpec, KernelSpec]]:
    """(op, kernel) of every kernel with a program count, of `ops` (None: all ops)."""
    return [
        (spec, kernel)
        for name, spec in sorted(all_ops().items())
        if ops is None or name in ops
        for kernel in spec.kernels
        if PROGRAMS in kernel.tunables
    ]


def base_config(spec: OpSpec, kernel: KernelSpec, case: Case, backend: Backend) -> Config | None:
    """The config the program counts vary: the soc's frozen one for the case, else the default,
    in the backend's space (its other launch options at their defaults); where that does not
    fit the case (a block over a small accuracy case's dimension), the nearest feasible config
    on the classic grid; None where none is feasible."""
    space = space_for(kernel, backend.launch_options, backend.option_defaults)
    frozen = frozen_config(spec.name, backend.soc, kernel.name, case.name)
    config = space.complete(frozen or kernel.default(case))
    if not kernel.violation(config, case, backend.limits):
        return config
    classic = [c for c in space.feasible(case, backend.limits) if not c.get(PROGRAMS.name)]
    return space.nearest(config, classic)


def check(
    spec: OpSpec, kernel: KernelSpec, case: Case, backend: Backend, config: Config
) -> dict[int, str]:
    """program count -> "" where the kernel's outputs are those of the classic grid bit for bit
    (every tile runs the same code, whichever program takes it) and pass against the float64
    golden as `autotune verify` judges a port alone, or fail it as the classic grid does (a
    backward kernel fed a rounded forward output); else why not."""
    inputs = spec.make_inputs(case, backend.device)
    cpu = {k: v.cpu() if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
    golden = spec.reference(cpu)
    inputs = spec.kernel_inputs(kernel.name, inputs, golden)
    ran = {}
    for programs in (0, *(p for p in PROGRAMS.values if p)):
        outputs = spec.launch(kernel.name, inputs, {**config, PROGRAMS.name: programs})
        ran[programs] = {name: outputs[name].cpu() for name in kernel.outputs}
    out = {}
    for programs, outputs in ran.items():
        problems = []
        for name, actual in outputs.items():
            if not torch.equal(actual, ran[0][name]):
                problems.append(f"{name} differs from the classic grid's")
            want = spec.comparable(name, golden[name], cpu)
            errors = measure(spec.comparable(name, actual, cpu), want, case.dtype)
            verdict = judge(errors, None, case.dtype, "L0")
            if not verdict.passed:
                problems.append(f"{name} vs golden: {verdict.reason}")
        out[programs] = "; ".join(problems)
    return out


def ab(
    spec: OpSpec,
    kernel: KernelSpec,
    case: Case,
    config: Config,
    backend: Backend,
    rounds: int,
    reps: int,
) -> dict[int, dict[str, Any]]:
    """program count -> median ms, gain over the classic grid, p-value and verdict; every
    count interleaved with the classic grid, round by round."""
    inputs = spec.make_inputs(case, backend.device)
    golden = spec.reference(inputs, case.torch_dtype)  # only what a backward kernel reads
    inputs = spec.kernel_inputs(kernel.name, inputs, golden)

    def call(programs: int) -> Callable[[], object]:
        return lambda: spec.launch(kernel.name, inputs, {**config, PROGRAMS.name: programs})

    fns = {p: call(p) for p in PROGRAMS.values}
    samples: dict[int, list[float]] = {p: [] for p in fns}
    for fn in fns.values():
        fn()  # compile outside the timed rounds
    for _ in range(rounds):
        for programs, fn in fns.items():
            samples[programs] += backend.samples(fn, reps)
    classic = samples[0]
    out = {}
    for programs, times in samples.items():
        wins, gain, p_value = faster_beyond_noise(times, classic, MIN_GAIN, ALPHA)
        loses = faster_beyond_noise(classic, times, MIN_GAIN, ALPHA)[0]
        verdict = "classic" if programs == 0 else "wins" if wins else "loses" if loses else "ties"
        out[programs] = {
            "median_ms": sorted(times)[len(times) // 2],
            "gain": gain,
            "p": p_value,
            "verdict": verdict,
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="cpu (verify only), or a device soc")
    parser.add_argument("--op", action="append", help="only this op (repeatable)")
    parser.add_argument("--cases", choices=("accuracy", "performance", "all"), default="all")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    print(f"# {backend.describe()}, versions {backend.versions()}")
    kinds = ("accuracy", "performance") if args.cases == "all" else (args.cases,)
    failed = 0
    for spec, kernel in persistent_kernels(args.op):
        for kind in kinds:
            for case in spec.cases(kind):  # type: ignore[arg-type]
                config = base_config(spec, kernel, case, backend)
                if config is None:
                    print(f"skip {spec.name}:{kernel.name} {case.name}: no feasible config")
                    continue
                verdicts = check(spec, kernel, case, backend, config)
                # A program count fails where it differs from the classic grid's verdict.
                failed += sum(1 for v in verdicts.values() if v != verdicts[0])
                marks = " ".join(f"P{p}:{v or 'ok'}" for p, v in verdicts.items())
                print(f"verify {spec.name}:{kernel.name} {case.name} {config}: {marks}", flush=True)
                if kind != "performance" or backend.is_interpreter:
                    continue
                timed = ab(spec, kernel, case, config, backend, args.rounds, args.reps)
                line = " ".join(
                    f"P{p}={t['median_ms']:.4f}ms({t['verdict']}, {t['gain']:+.1%}, p={t['p']:.3g})"
                    for p, t in timed.items()
                )
                print(f"time {spec.name}:{kernel.name} {case.name}: {line}", flush=True)
    print(f"# {failed} (kernel, case, program count) checks failed where the classic grid passed")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
