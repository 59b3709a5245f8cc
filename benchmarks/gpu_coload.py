"""A second process that keeps the same GPU busy, as issue 27 measured `autotune check` beside:
bf16 4096x4096 matmuls in bursts, with random pauses of 0-4 ms between them. Runs until killed
(or `--seconds`); prints how many bursts it ran.

    python benchmarks/gpu_coload.py [--burst 8] [--seconds 0] [--seed 0]
"""

from __future__ import annotations

import argparse
import random
import signal
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--burst", type=int, default=8, help="matmuls per burst (about 0.2 ms each)"
    )
    parser.add_argument(
        "--seconds", type=float, default=0.0, help="stop after this long (0: never)"
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    stop = {"now": False}
    signal.signal(signal.SIGTERM, lambda *_: stop.update(now=True))
    start, bursts = time.monotonic(), 0
    while not stop["now"] and (not args.seconds or time.monotonic() - start < args.seconds):
        for _ in range(args.burst):
            torch.mm(a, b)
        torch.cuda.synchronize()
        bursts += 1
        time.sleep(rng.uniform(0.0, 0.004))
    print(f"co-load: {bursts} bursts of {args.burst} bf16 4096^2 matmuls in "
          f"{time.monotonic() - start:.0f} s", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
