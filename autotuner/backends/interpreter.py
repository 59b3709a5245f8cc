"""A fix for the Triton interpreter's bfloat16 `tl.dot`.

The interpreter keeps bfloat16 values as their uint16 bit patterns and its `create_dot` multiplies
those integers (triton-lang/triton#11584; the maintainers' answer is that bfloat16 is unsupported
in the interpreter). A bfloat16 -> float32 widening is exact, and a GPU's bf16 MMA accumulates the
exact products in fp32, so widening the operands gives the GPU's arithmetic. Upstream Triton and
triton-ascend share this builder; the fix applies to both and is idempotent.
"""

from __future__ import annotations

import numpy as np


def enable_bfloat16_dot() -> None:
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.create_dot, "_widens_bfloat16", False):
        return
    original = builder.create_dot

    def widen(handle):
        if handle.dtype != tl.bfloat16:
            return handle
        bits = np.asarray(handle.data).astype(np.uint32) << 16
        return interpreter.TensorHandle(bits.view(np.float32), tl.float32)

    def create_dot(self, a, b, d, *args, **kwargs):
        return original(self, widen(a), widen(b), d, *args, **kwargs)

    create_dot._widens_bfloat16 = True
    builder.create_dot = create_dot
