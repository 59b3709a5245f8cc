"""The launchers' pick for norm rows wider than any frozen case: first-call seconds and part
times of the configs each checkout's rule picks, against upstream, interleaved.

Per op and held-out shape (`--shape OP:KEY=V,...:DTYPE`, by default rows wider than every case
frozen on the H200 for the dtype), per part (fwd, then bwd):
- `before` (or NAME): the fwd and bwd_dx configs the port of `--before [NAME=]ROOT` (an
  earlier checkout; repeatable) picks, launched through this port (the kernels' @triton.jit
  source is the same; bwd_dw's pick is not in question, so all take this port's);
- `after`: this port's own pick (since 24c941d: the nearest case's warps scaled with the row);
- `upstream`: upstream's kernels.
`first s`: the wall seconds of a variant's first call, compiles (and upstream's autotune)
included, in a fresh Triton cache per process (0.0: a kernel an earlier variant compiled).
Then `interleaved_ab.ab_line`: rounds of reps of each variant in turn, each judged against
upstream.

    git worktree add ../before REV
    python benchmarks/wide_row_pick.py --soc H200 --before ../before [--before NAME=../other]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="wide_row_pick_triton_")

import torch  # noqa: E402
from dispatch_regret import before_port, current_pick  # noqa: E402
from interleaved_ab import ab_line  # noqa: E402

from autotuner.backends import get_backend  # noqa: E402
from ops import get_op  # noqa: E402
from ops.ports import load_port  # noqa: E402
from ops.spec import Case, OpSpec  # noqa: E402

#: Rows wider than the H200's frozen cases (D 256 fp32, 512 fp16, 256 and 1024 bf16; the group
#: norm's H x D 256-1024), at HSTU row counts.
SHAPES = (
    "group_norm_mul_dropout:N=65536,H=4,D=512:bfloat16",
    "group_norm_mul_dropout:N=262144,H=2,D=512:float32",
    "layer_norm:N=262144,D=1024:float32",
    "layer_norm:N=65536,D=2048:bfloat16",
    "rms_norm:N=65536,D=2048:bfloat16",
    "swish_layer_norm:N=65536,D=2048:bfloat16",
    "layer_norm_mul_dropout:N=65536,D=2048:bfloat16",
)
#: The kernels whose pick the rule changes.
ROW_KERNELS = ("fwd", "bwd_dx")


def parse_shape(text: str) -> tuple[OpSpec, dict[str, int], str]:
    op, keys, dtype = text.split(":")
    shape = {k: int(v) for k, v in (item.split("=") for item in keys.split(","))}
    return get_op(op), shape, dtype


def picks(port, soc: str, shape: dict[str, int], dtype: str) -> tuple[dict, str]:
    """(kernel -> config, where each came from) of a port's block for the row kernels."""
    configs, sources = {}, []
    for kernel in ROW_KERNELS:
        default = port.default_config(kernel, shape)
        configs[kernel], source = current_pick(port, soc, kernel, shape, dtype, default)
        sources.append(f"{kernel} {configs[kernel]} from {source}")
    return configs, "; ".join(sources)


def first_call(make: Callable[[], Callable[[], object]]) -> tuple[Callable[[], object], float]:
    """(the call `make` returns, seconds to make it and call it once, compiles included)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    call = make()
    call()
    torch.cuda.synchronize()
    return call, time.perf_counter() - start


def time_parts(backend, spec: OpSpec, case: Case, configs: dict, rounds: int, reps: int) -> None:
    """Per part: each variant's first-call seconds, then the interleaved A/B line."""
    inputs = spec.make_inputs(case, backend.device)
    for part in spec.parts:
        makers = {"upstream": partial(spec.upstream_part, part, inputs, case)}
        makers |= {name: partial(spec.port_part, part, inputs, c) for name, c in configs.items()}
        fns, seconds = {}, []
        for name, make in makers.items():
            call, took = first_call(make)
            fns[name] = (call, ())  # outputs not compared: configs reduce in other orders
            seconds.append(f"{name} {took:.1f}")
        print(f"{spec.name} {case.name} {part} first s: {', '.join(seconds)}", flush=True)
        line = ab_line(backend, fns, rounds, reps, reference="upstream")
        print(f"{spec.name} {case.name} {part}: {line}", flush=True)
    del inputs, fns
    torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soc", required=True, help="a GPU soc (H200)")
    parser.add_argument(
        "--before", action="append", required=True, metavar="[NAME=]ROOT",
        help="an earlier checkout, its variant named NAME (default: before); repeatable",
    )  # fmt: skip
    parser.add_argument("--shape", action="append", help="OP:KEY=V,...:DTYPE (repeatable)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    backend = get_backend(args.soc)
    if backend.is_interpreter:
        raise SystemExit("wide_row_pick.py times kernels: it needs a GPU soc")
    roots = dict((item.split("=", 1) if "=" in item else ("before", item)) for item in args.before)
    roots = {name: Path(root) for name, root in roots.items()}
    print(f"# {backend.describe()}, versions {backend.versions()}", flush=True)
    for text in args.shape or SHAPES:
        spec, shape, dtype = parse_shape(text)
        case = spec.make_case(shape, dtype, (), "performance")
        ports = {name: before_port(spec.name, root) for name, root in roots.items()}
        ports["after"] = load_port(spec.name)
        configs = {}
        for name, port in ports.items():
            configs[name], said = picks(port, args.soc, shape, dtype)
            print(f"# {spec.name} {case.name} {name}: {said}", flush=True)
        time_parts(backend, spec, case, configs, args.rounds, args.reps)


if __name__ == "__main__":
    main()
