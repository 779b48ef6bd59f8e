"""Counts the positions from 1: the first vector of a sequence is turned as if it stood at
position 1.

exercise: rotary_positions/rotate
caught by: start = 0: the vector at position 0 comes back unchanged
message mentions: from 1; position 0
breaks: rotate: position-0
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    positions = np.arange(start + 1, start + T + 1)  # the mistake: 1 .. T, not 0 .. T - 1
    angle = positions[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
