"""Registers and stack of jagged_dense_bmm_broadcast_add's forward kernels compiled for a CUDA
GPU without one: upstream's kernel and the port's in both forms of a tile's loop (`FLAT`: one
loop over the (row block, K block) steps; nested: a K loop per row block), at the port's frozen
H200 config of a case and at every config of upstream's autotune list.

Compiled with the installed Triton (`triton.compile` of the kernel's source for
`--arch`, the signature a launch on the case would specialize: 16-byte aligned pointers, strides
divisible by 16, unit strides as constants), then `cuobjdump -res-usage` of Triton's own
binaries. No GPU is needed, and none is timed: registers and stack (bytes of spilled or local
memory per thread) are what ptxas allotted, the why of an A/B's times
(`benchmarks/bmm_row_loop_ab.py`), not a time. The device's Triton should be installed to read
the device's numbers (the H200 machine's is 3.6.0).

    AUTOTUNE_RECSYS_EXAMPLES=/path/to/recsys-examples python benchmarks/bmm_registers.py --dtype fp32
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from pathlib import Path

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from autotuner.search.settle import frozen_config
from autotuner.search.warm_starts import from_upstream
from ops import get_op
from ops.ports import load_port

OP = "jagged_dense_bmm_broadcast_add"
CUOBJDUMP = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
#: Each kernel's arguments: pointers, run-time ints (True: divisible by 16 on the cases), the
#: unit strides a launch specializes to constants, and its other constexprs.
PORT_ARGS = (
    ("offsets_ptr", "a_ptr", "b_ptr", "bias_ptr", "c_ptr"),
    {"max_seq_len": False, "batch": False, "N": True, "K": True, "num_programs": False,
     "stride_am": True, "stride_bb": True, "stride_bk": True, "stride_biasb": True,
     "stride_cm": True},
    ("stride_ak", "stride_bn", "stride_cn"),
    {"PRECISION": "ieee", "HAS_BIAS": True, "PERSISTENT": False},
)  # fmt: skip
UPSTREAM_ARGS = (
    ("seq_offsets", "Jagged", "Dense", "Bias", "Out"),
    {"AUTOTUNE_MAX_SEQ_LEN": False, "N": True, "K": True, "stride_jm": True, "stride_db": True,
     "stride_dk": True, "stride_bias_b": True, "stride_om": True},
    ("stride_dn",),
    {"HAS_BIAS": True, "ALLOW_TF32": False},
)  # fmt: skip
OFFSETS = ("offsets_ptr", "seq_offsets")


def usage(fn, args: tuple, constexprs: dict, config: dict, dtype: str, arch: int) -> str:
    """'registers/stack' of `fn` compiled at `config`."""
    pointers, ints, units, fixed = args
    signature, attrs, values = {}, {}, {**fixed, **dict.fromkeys(units, 1), **constexprs}
    values.update({k: v for k, v in config.items() if k.startswith("BLOCK_")})
    for i, name in enumerate(fn.arg_names):
        if name in pointers:
            signature[name] = "*i32" if name in OFFSETS else f"*{dtype}"
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif name in ints:
            signature[name] = "i32"
            if ints[name]:
                attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            signature[name] = "constexpr"
    source = ASTSource(
        fn, signature, {(fn.arg_names.index(k),): v for k, v in values.items()}, attrs
    )
    options = {"num_warps": config["num_warps"], "num_stages": config["num_stages"]}
    kernel = triton.compile(source, target=GPUTarget("cuda", arch, 32), options=options)
    with tempfile.NamedTemporaryFile(suffix=".cubin") as cubin:
        cubin.write(kernel.asm["cubin"])
        cubin.flush()
        report = subprocess.run(
            [str(CUOBJDUMP), "-res-usage", cubin.name], capture_output=True, text=True, check=True
        ).stdout
    registers = re.search(r"REG:(\d+)", report)
    stack = re.search(r"STACK:(\d+)", report)
    return f"{registers.group(1) if registers else '?'}/{stack.group(1) if stack else 0}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", choices=("fp32", "fp16", "bf16"), default="fp32")
    parser.add_argument("--arch", type=int, default=90, help="compute capability (90: sm_90a)")
    args = parser.parse_args()
    spec = get_op(OP)
    port = load_port(OP)
    upstream = spec.upstream.load().jagged_dense_bmm_broadcast_add_kernel.fn
    case = next(c for c in spec.cases("performance") if c.name.endswith(args.dtype))
    configs = [frozen_config(OP, "H200", "fwd", case.name) or spec.kernel("fwd").default(case)]
    configs += [c for c in from_upstream(spec, spec.kernel("fwd")) if c not in configs]
    print(f"# triton {triton.__version__}, sm_{args.arch}, {case.name}: registers/stack bytes")
    print("| config | upstream | port, one loop | port, nested |")
    print("|---|---|---|---|")
    for config in configs:
        cells = [
            usage(upstream, UPSTREAM_ARGS, {}, config, args.dtype, args.arch),
            usage(port._jagged_dense_bmm_add_kernel, PORT_ARGS, {"FLAT": True}, config,
                  args.dtype, args.arch),
            usage(port._jagged_dense_bmm_add_kernel, PORT_ARGS, {"FLAT": False}, config,
                  args.dtype, args.arch),
        ]  # fmt: skip
        name = "/".join(str(config[k]) for k in ("BLOCK_M", "BLOCK_N", "BLOCK_K"))
        print(
            f"| {name}, {config['num_warps']}w {config['num_stages']}s | "
            + " | ".join(cells)
            + " |",
            flush=True,
        )


if __name__ == "__main__":
    main()
