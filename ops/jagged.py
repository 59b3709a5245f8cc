"""Jagged-tensor helpers shared by the op specs: deterministic lengths, offsets, padding."""

from __future__ import annotations

import torch

_GOLDEN = 0.6180339887498949


def skewed_lengths(batch: int, max_seq_len: int, overflow: float = 1.25) -> tuple[int, ...]:
    """Deterministic lengths with a recommendation-like skew: many short, some over max_seq_len.

    u_i = frac(i * golden ratio) is low-discrepancy; length = floor(u_i^2 * overflow * max_seq_len)
    gives a mean near 0.42 * max_seq_len, a few empty sequences and about 10% truncated ones.
    """
    top = overflow * max_seq_len
    return tuple(int(((i * _GOLDEN) % 1.0) ** 2 * top) for i in range(1, batch + 1))


def offsets_from_lengths(lengths: tuple[int, ...] | list[int], device: torch.device) -> torch.Tensor:
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64)
    if lengths:
        offsets[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0)
    return offsets.to(device)


def validate_lengths(lengths: list[int], batch: int) -> None:
    if len(lengths) != batch:
        raise ValueError(f"{len(lengths)} lengths given for B={batch}")
    if any(n < 0 for n in lengths):
        raise ValueError("lengths must be non-negative")


def lengths_from_offsets(offsets: list[int]) -> list[int]:
    """Lengths of user-given offsets; raises ValueError unless first 0 and non-decreasing."""
    if len(offsets) < 2:
        raise ValueError("offsets need at least two entries (B + 1)")
    if offsets[0] != 0:
        raise ValueError(f"offsets must start at 0, not {offsets[0]}")
    for i in range(1, len(offsets)):
        if offsets[i] < offsets[i - 1]:
            raise ValueError(f"offsets must be non-decreasing: offsets[{i}]={offsets[i]} < offsets[{i - 1}]={offsets[i - 1]}")
    return [b - a for a, b in zip(offsets, offsets[1:], strict=False)]


def pad_rows(values: torch.Tensor, offsets: torch.Tensor, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    """[sum_L, D] jagged -> ([B, max_len, D] zero-padded, [B, max_len] mask of real rows)."""
    batch = offsets.numel() - 1
    lengths = (offsets[1:] - offsets[:-1]).clamp(max=max_len)
    rows = torch.arange(max_len, device=values.device)
    mask = rows[None, :] < lengths[:, None]
    index = (offsets[:-1, None] + rows[None, :]).clamp(max=max(values.size(0) - 1, 0))
    padded = values[index.reshape(-1)].reshape(batch, max_len, -1) if values.numel() else values.new_zeros(batch, max_len, values.size(-1))
    return padded * mask[..., None], mask


def unpad_rows(padded: torch.Tensor, offsets: torch.Tensor, total: int) -> torch.Tensor:
    """Inverse of pad_rows: rows beyond max_len (truncated) come back as zeros."""
    batch, max_len, width = padded.shape
    out = padded.new_zeros(total, width)
    lengths = (offsets[1:] - offsets[:-1]).clamp(max=max_len)
    rows = torch.arange(max_len, device=padded.device)
    mask = rows[None, :] < lengths[:, None]
    index = offsets[:-1, None] + rows[None, :]
    out[index[mask]] = padded[mask]
    return out
