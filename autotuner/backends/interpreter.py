"""Two fixes for the Triton interpreter's bfloat16: its `tl.dot`, and its float32 -> bfloat16 casts.

The interpreter keeps bfloat16 values as their uint16 bit patterns and its `create_dot` multiplies
those integers (triton-lang/triton#11584; the maintainers' answer is that bfloat16 is unsupported
in the interpreter). A bfloat16 -> float32 widening is exact, and a GPU's bf16 MMA accumulates the
exact products in fp32, so widening the operands gives the GPU's arithmetic.

Its `create_fp_trunc` (every float32 -> bfloat16 `.to()` and store) drops the low 16 bits, i.e.
rounds toward zero, where Triton's own semantics ask round-to-nearest-even for a downcast
(`semantic.cast`: "For fp downcasting default rounding mode should be RTNE") and a GPU does it
(`cvt.rn.bf16.f32`): a kernel that rounds many values to bfloat16 and sums them (an attention's
weights before their dot) gets a biased error, twice a GPU's. Rounding to nearest even here gives
the GPU's values.

Upstream Triton and triton-ascend share this builder; the fixes apply to both and are idempotent.
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


def enable_bfloat16_rounding() -> None:
    """float32 -> bfloat16 casts round to nearest even, as on a GPU (see the module docstring)."""
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    if getattr(builder.create_fp_trunc, "_rounds_bfloat16", False):
        return
    original = builder.create_fp_trunc

    def create_fp_trunc(self, src, dst_type):
        if dst_type.scalar != tl.bfloat16 or src.dtype.scalar != tl.float32:
            return original(self, src, dst_type)
        values = np.asarray(src.data, dtype=np.float32)
        bits = values.view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        rounded = np.where(np.isnan(values), (bits >> 16) | 0x40, rounded)  # NaN stays NaN
        return interpreter.TensorHandle(rounded.astype(np.uint16), tl.bfloat16)

    create_fp_trunc._rounds_bfloat16 = True
    builder.create_fp_trunc = create_fp_trunc
