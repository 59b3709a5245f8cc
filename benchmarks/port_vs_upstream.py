"""Untuned port (upstream default configs) vs the upstream kernel, per op and performance case.

Run on a device: `python benchmarks/port_vs_upstream.py --soc H200`. Prints the card, the
versions and a table of medians (ms) with p20-p80; never run it on `cpu` (interpreter times).
"""

from __future__ import annotations

import argparse
import datetime
import platform

import torch

from autotuner.backends import get_backend
from autotuner.upstream import load
from ops import all_ops


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--op", action="append")
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("interpreter times are not performance numbers; run this on a device")
    print(
        f"# {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, {backend.describe()}, python {platform.python_version()}"
    )
    print("# " + ", ".join(f"{k} {v}" for k, v in backend.versions().items()))
    print(f"{'op':30} {'case':26} {'part':5} {'upstream ms':>22} {'port ms':>22} {'port/up':>8}")
    for name, spec in all_ops().items():
        if args.op and name not in args.op:
            continue
        for case in spec.cases("performance"):
            inputs = spec.make_inputs(case, backend.device)
            ups = spec.upstream_outputs(case)
            parts = {
                "all": (lambda: spec.run_port(inputs), lambda: spec.run_upstream(inputs, case))
            }
            if name == "jagged_dense_flash_attention":
                up = load(spec.upstream.file, spec.upstream.sha256)
                q, k, v, bias, offsets = (
                    inputs[x] for x in ("q", "k", "v", "attn_bias", "offsets")
                )
                n = int(inputs["max_seq_len"])
                parts = {
                    "fwd": (
                        lambda: spec.launch("fwd", inputs, None),
                        lambda: up.jagged_dense_flash_attention_fwd(q, k, v, bias, offsets, n),
                    ),
                    "all": parts["all"],
                }
            for part, (port_fn, up_fn) in parts.items():
                port_t = backend.time(port_fn)
                up_t = backend.time(up_fn) if ups else None
                fmt = lambda t: f"{t.median_ms:8.4f} ({t.p20_ms:.4f}-{t.p80_ms:.4f})" if t else "-"
                ratio = f"{port_t.median_ms / up_t.median_ms:8.2f}" if up_t else "-"
                print(
                    f"{name:30} {case.name:26} {part:5} {fmt(up_t):>22} {fmt(port_t):>22} {ratio:>8}",
                    flush=True,
                )
            del inputs
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
