"""Untuned port (upstream default configs) vs the upstream kernel, per op and performance case.

Run on a device: `python benchmarks/port_vs_upstream.py --soc H200`. Prints the card, the
versions and a table of medians (ms) with p20-p80; it refuses `cpu` (interpreter times).
"""

from __future__ import annotations

import argparse
import datetime
import platform
from collections.abc import Callable

from autotuner.backends import Backend, Timing, get_backend
from core.upstream import load
from ops import all_ops
from ops.spec import Case, OpSpec


def parts(spec: OpSpec, case: Case, inputs: dict) -> dict[str, tuple[Callable, Callable | None]]:
    """name -> (port callable, upstream callable or None where upstream cannot run the case)."""
    runs_upstream = bool(spec.upstream_outputs(case))
    whole = (
        lambda: spec.run_port(inputs),
        (lambda: spec.run_upstream(inputs, case)) if runs_upstream else None,
    )
    if spec.name != "jagged_dense_flash_attention":
        return {"all": whole}
    up = load(spec.upstream.file, spec.upstream.sha256)
    args = [inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets")]
    args += [int(inputs["max_seq_len"]), bool(inputs["allow_tf32"])]
    forward = (
        lambda: spec.launch("fwd", inputs, None),
        lambda: up.jagged_dense_flash_attention_fwd(*args),
    )
    return {"fwd": forward, "all": whole}


def fmt(t: Timing | None) -> str:
    return f"{t.median_ms:8.4f} ({t.p20_ms:.4f}-{t.p80_ms:.4f})" if t else "-"


def run(backend: Backend, ops: list[str] | None) -> None:
    print(f"{'op':30} {'case':26} {'part':5} {'upstream ms':>24} {'port ms':>24} {'port/up':>8}")
    for name, spec in all_ops().items():
        if ops and name not in ops:
            continue
        for case in spec.cases("performance"):
            inputs = spec.make_inputs(case, backend.device)
            for part, (port_fn, up_fn) in parts(spec, case, inputs).items():
                port_t = backend.time(port_fn)
                up_t = backend.time(up_fn) if up_fn else None
                ratio = f"{port_t.median_ms / up_t.median_ms:8.2f}" if up_t else "-"
                print(
                    f"{name:30} {case.name:26} {part:5} {fmt(up_t):>24} {fmt(port_t):>24} {ratio:>8}",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--op", action="append")
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    now = datetime.datetime.now(datetime.UTC)
    print(f"# {now:%Y-%m-%d %H:%M} UTC, {backend.describe()}, python {platform.python_version()}")
    print("# " + ", ".join(f"{k} {v}" for k, v in backend.versions().items()))
    run(backend, args.op)


if __name__ == "__main__":
    main()
