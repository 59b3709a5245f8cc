"""A test-only op whose configs fail on purpose: one crashes its process, one hangs, one is wrong,
one is wrong in a few small elements only (within the norm-wise tolerance), one reads a device
value on the host inside its launch (so would time the host's latency on a device).

Loaded through AUTOTUNE_OPS_MODULES; `install(root)` writes its port file under AUTOTUNE_ROOT.
"""

from __future__ import annotations

import os
from pathlib import Path

import torch

from ops.ports import load_port
from ops.spec import Case, KernelSpec, OpSpec, Upstream
from ops.tunable import Role, Tunable

NAME = "faulty_scale"
CRASH, HANG, WRONG, FEW_OFF, SYNC = 64, 128, 32, 1024, 2048

PORT = f"""
import os
import signal
import time

import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, WRONG: tl.constexpr, FEW_OFF: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    y = tl.load(x_ptr + offs, mask=offs < n) * 2.0
    if WRONG:
        y = y + 1.0
    if FEW_OFF:
        y = tl.where(tl.abs(y) < 0.05, y * 1.01, y)
    tl.store(y_ptr + offs, y, mask=offs < n)


def scale(x, config):
    block = config["BLOCK"]
    if block == {CRASH}:
        os.kill(os.getpid(), signal.SIGKILL)
    if block == {HANG}:
        time.sleep(3600)
    if block == {SYNC} and int(x.abs().sum()) < 0:  # a read of a device value: a sync
        raise AssertionError
    y = torch.empty_like(x)
    _scale_kernel[(triton.cdiv(x.numel(), block),)](x, y, x.numel(), BLOCK=block, WRONG=block == {WRONG}, FEW_OFF=block == {FEW_OFF})
    return y
"""


def install(root: Path) -> None:
    folder = root / "experimental/triton/atk_test" / NAME / "npu_atk_test"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{NAME}.py").write_text(PORT)


def _over_limit(config, case, limits):
    return "BLOCK 256 is excluded by this test" if config["BLOCK"] == 256 else None


class FaultyScale(OpSpec):
    name = NAME
    summary = "y = 2 x, with configs that crash, hang or compute the wrong thing"
    upstream = Upstream(file="", sha256="", functions=(), lines="")
    shape_keys = ("N",)
    input_names = ("x",)
    output_names = ("y",)
    dtypes = ("float32",)
    kernels = (
        KernelSpec(
            name="fwd",
            tunables=(
                Tunable("BLOCK", (16, 32, 64, 128, 256, 512, FEW_OFF, SYNC)),
                Tunable("num_warps", (4,), role=Role.LAUNCH_OPTION),
            ),
            outputs=("y",),
            # FAULTY_DEFAULT_BLOCK: a default that fails too (a port or tool fault, not a config's).
            default=lambda case: {
                "BLOCK": int(os.environ.get("FAULTY_DEFAULT_BLOCK", 16)),
                "num_warps": 4,
            },
            grid=lambda config, case: (-(-case.shape["N"] // config["BLOCK"]),),
            tile_bytes=lambda config, case: 8 * config["BLOCK"],
            stream_bytes=lambda config, case: 4 * config["BLOCK"],
            constraints=(_over_limit,),
            port_kernel="_scale_kernel",
        ),
    )

    def make_case(self, shape, dtype, lengths, kind, offsets=None) -> Case:
        return Case(NAME, f"n{shape['N']}", dict(shape), dtype, (), kind)

    def cases(self, kind):
        return [self.make_case({"N": 1000}, "float32", (), kind)]

    def make_inputs(self, case, device, seed=0):
        gen = torch.Generator().manual_seed(seed)
        return {"x": torch.randn(case.shape["N"], generator=gen).to(device)}

    def reference(self, inputs, compute_dtype=torch.float64):
        return {"y": 2 * inputs["x"].to(compute_dtype)}

    def run_port(self, inputs, configs=None):
        return self.launch(
            "fwd", inputs, (configs or {}).get("fwd") or {"BLOCK": 16, "num_warps": 4}
        )

    def upstream_outputs(self, case):
        return ()

    def run_upstream(self, inputs, case):
        return {}

    def port_part(self, part, inputs, configs):
        return lambda: self.run_port(inputs, configs)

    def upstream_part(self, part, inputs, case):
        return None

    def launch(self, kernel, inputs, config):
        return {"y": load_port(NAME).scale(inputs["x"], config)}


SPEC = FaultyScale()
