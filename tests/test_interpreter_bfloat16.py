"""The interpreter's bfloat16 fixes (autotuner.backends.interpreter): its tl.dot and its
float32 -> bfloat16 casts give what a GPU gives."""

import torch
import triton
import triton.language as tl


@triton.jit
def _round_trip(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, x.to(tl.bfloat16), mask=offs < n)


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tile = offs[:, None] * BLOCK + offs[None, :]
    c = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile))
    tl.store(c_ptr + tile, c)


def test_float32_to_bfloat16_rounds_to_nearest_even(cpu):
    """torch rounds to nearest even, as a GPU does; the interpreter's own cast truncates."""
    x = torch.randn(1024, generator=torch.Generator().manual_seed(0)) * 3
    x[:4] = torch.tensor(
        [1.0 + 2**-8, 1.0 + 3 * 2**-8, float("inf"), float("nan")]
    )  # ties, inf, NaN
    y = torch.empty(1024, dtype=torch.bfloat16)
    _round_trip[(1,)](x, y, x.numel(), BLOCK=1024)
    want = x.to(torch.bfloat16)
    assert torch.equal(y[:3], want[:3]) and torch.isnan(y[3])
    assert torch.equal(y[4:], want[4:])


def test_bfloat16_dot_accumulates_exact_products(cpu):
    gen = torch.Generator().manual_seed(1)
    a, b = (torch.randn(16, 16, generator=gen).to(torch.bfloat16) for _ in range(2))
    c = torch.empty(16, 16)
    _dot[(1,)](a, b, c, BLOCK=16)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-6, atol=1e-6)
