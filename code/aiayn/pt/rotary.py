"""Rotary position embeddings, RoPE (Su et al., 2021), PyTorch.

The paper adds a position's sinusoids to its embedding (§3.5), and the positional chapter shows
that moving k positions is then a rotation of each (sin, cos) pair by k times its frequency.
RoPE applies that rotation directly, to the queries and keys of each head, inside attention:
feature pair (2i, 2i + 1) of the vector at position m turns by the angle m * theta_i, with the
paper's frequencies theta_i = 10000^(-2i/d_k). Nothing is added to the embeddings.

Why: a rotation keeps lengths, and rotating q by m theta and k by n theta changes their dot
product only through the angle between them, (m - n) theta. So the attention scores depend on
the offset m - n and not on where the pair stands: positions are relative by construction.
"""

import math

import torch
from torch import nn

from .._checks import check_positive

BASE = 10000.0  # the paper's wavelength scale (§3.5)


def rotary_angles(start: int, count: int, d_k: int) -> torch.Tensor:
    """(count, d_k / 2): the angle m * theta_i of pair i at positions m = start .. start + count - 1
    (float64; ``rotate`` casts the cosines and sines to the input's dtype)."""
    check_positive("d_k", d_k)
    if d_k % 2:
        raise ValueError(f"d_k={d_k} must be even: RoPE rotates features in pairs")
    if start < 0:
        raise ValueError(f"start must be a position >= 0, got {start}")
    theta = torch.exp(-math.log(BASE) * torch.arange(0, d_k, 2, dtype=torch.float64) / d_k)
    return torch.arange(start, start + count, dtype=torch.float64)[:, None] * theta


def rotate(x: torch.Tensor, start: int = 0, inverse: bool = False) -> torch.Tensor:
    """x (..., T, d_k): each position t's pairs (x_2i, x_2i+1) turned by (start + t) theta_i,
    i.e. multiplied by [[cos, -sin], [sin, cos]]; ``inverse`` turns them back (the transpose)."""
    angles = rotary_angles(start, x.shape[-2], x.shape[-1]).to(x.device)
    cos = torch.cos(angles).to(x.dtype)
    sin = (torch.sin(angles) * (-1.0 if inverse else 1.0)).to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    # Interleaved back into (x_0', x_1', x_2', ...): stack the pairs on a last axis, flatten it.
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class RotaryPositions(nn.Module):
    """The model's ``pos`` under ``positional="rotary"``: adds nothing (the attention rotates)."""

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        check_positive("d_model", d_model)
        check_positive("max_len", max_len)
        self._max_len = max_len

    @property
    def table(self):
        """There is no table to add. The paper's key-value cache adds rows of one; rotary
        models decode with ``aiayn.pt.variants.VariantIncrementalDecoder`` instead."""
        raise ValueError("rotary position embeddings add no positional table: decode a rotary model "
                         "with aiayn.pt.variants.VariantIncrementalDecoder")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.shape[1] > self._max_len:
            raise ValueError(f"x has {x.shape[1]} positions (shape {tuple(x.shape)}) but the model "
                             f"allows max_len={self._max_len}")
        return x
