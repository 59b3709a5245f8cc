"""Jagged-tensor helpers shared by the op specs: deterministic lengths, offsets, padding.

Plain lengths and tensors, no op spec types: `ops.spec` builds on them, and `ops.cases` has the
helpers that take a case.
"""

from __future__ import annotations

import torch

_GOLDEN = 0.6180339887498949


def skewed_lengths(batch: int, max_seq_len: int, overflow: float = 1.25) -> tuple[int, ...]:
    """Deterministic lengths with a recommendation-like skew: many short, some over max_seq_len.

    u_i = frac(i * golden ratio) is low-discrepancy; length = floor(u_i^2 * overflow * max_seq_len)
    gives a mean near 0.42 * max_seq_len, a few empty sequences and about 10% truncated ones.
    """
    top = overflow * max_seq_len
    return tuple(int(u**2 * top) for u in golden_points(batch))


def golden_points(batch: int) -> list[float]:
    """u_i = frac(i * golden ratio) for i = 1..batch: low-discrepancy points in [0, 1), so that
    lengths drawn through them spread long and short sequences over the batch."""
    return [(i * _GOLDEN) % 1.0 for i in range(1, batch + 1)]


def offsets_from_lengths(
    lengths: tuple[int, ...] | list[int], device: torch.device
) -> torch.Tensor:
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64)
    if lengths:
        offsets[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.int64), 0)
    return offsets.to(device)


def user_lengths(
    batch: int, offsets: list[int] | None, default: tuple[int, ...]
) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """(lengths, offsets) of a user-given case; offsets are only checked for count and end here,
    the launcher's checked mode judges the rest."""
    if offsets is None:
        return default, None
    if len(offsets) != batch + 1:
        raise ValueError(f"{len(offsets)} offsets given; B={batch} needs B + 1 = {batch + 1}")
    if offsets[-1] < 0:
        raise ValueError(f"offsets must end at the number of rows (>= 0), not {offsets[-1]}")
    return tuple(b - a for a, b in zip(offsets, offsets[1:], strict=False)), tuple(offsets)


def pad_rows(
    values: torch.Tensor, offsets: torch.Tensor, max_len: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """[sum_L, D] jagged -> ([B, max_len, D] zero-padded, [B, max_len] mask of real rows)."""
    batch = offsets.numel() - 1
    lengths = (offsets[1:] - offsets[:-1]).clamp(max=max_len)
    rows = torch.arange(max_len, device=values.device)
    mask = rows[None, :] < lengths[:, None]
    index = (offsets[:-1, None] + rows[None, :]).clamp(max=max(values.size(0) - 1, 0))
    padded = (
        values[index.reshape(-1)].reshape(batch, max_len, -1)
        if values.numel()
        else values.new_zeros(batch, max_len, values.size(-1))
    )
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


def sequence_chunks(
    offsets: torch.Tensor, per_sequence: int, budget: int = 1 << 27
) -> list[tuple[int, int]]:
    """Ranges [i, j) of sequences whose padded intermediates (`per_sequence` elements each) stay
    within `budget` elements: a reference of the big performance cases needs over 100 GiB at once."""
    batch = offsets.numel() - 1
    step = max(1, budget // max(per_sequence, 1))
    return [(i, min(batch, i + step)) for i in range(0, batch, step)]
