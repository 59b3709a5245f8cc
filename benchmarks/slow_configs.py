"""Replace the frozen configs of some ops on a soc with slower ones, for `autotune check`'s
sensitivity runs (benchmarks/check_repeatability.sh, check_contention.sh): every BLOCK_* tunable at
its smallest value, launch options kept (far slower: 5x to 96x on the H200), or with `--neighbour`
a one-step neighbour, num_warps halved (doubled where it is at its smallest), which slows some parts
by a few percent and others by tens, the threshold's region. Rewrites the kernel files' generated
blocks in place; prints old -> new.

    python benchmarks/slow_configs.py --soc H200 [--neighbour] OP [OP ...]
"""

from __future__ import annotations

import argparse

from autotuner.atk.generated_block import read_frozen, replace_block
from core.paths import port_file
from ops import get_op


def slowest_blocks(op: str, kernel: str, config: dict) -> dict:
    spec = get_op(op).kernel(kernel)
    smallest = {t.name: min(t.values) for t in spec.tunables if t.name.startswith("BLOCK_")}
    return {**config, **{k: v for k, v in smallest.items() if k in config}}


def neighbour(op: str, kernel: str, config: dict) -> dict:
    warps = next(t.values for t in get_op(op).kernel(kernel).tunables if t.name == "num_warps")
    at = warps.index(config["num_warps"])
    return {**config, "num_warps": warps[at - 1] if at > 0 else warps[at + 1]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--soc", required=True)
    parser.add_argument("--neighbour", action="store_true", help="num_warps one step down")
    parser.add_argument("ops", nargs="+")
    args = parser.parse_args()
    for op in args.ops:
        path = port_file(op)
        source = path.read_text(encoding="utf-8")
        frozen = read_frozen(source, path)
        for kernel, entries in frozen.get(args.soc, {}).items():
            for entry in entries:
                slower = neighbour if args.neighbour else slowest_blocks
                slow = slower(op, kernel, entry["config"])
                print(f"{op} {kernel} {entry['case']}: {entry['config']} -> {slow}")
                entry["config"] = slow
        path.write_text(replace_block(source, frozen, path), encoding="utf-8")


if __name__ == "__main__":
    main()
