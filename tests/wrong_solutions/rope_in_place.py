"""Writes the turned pairs back into x and returns it: the values are right, but the caller's
queries are gone.

exercise: rotary_positions/rotate
caught by: leaves x unchanged
message mentions: x[..., 0::2] = ...; np.empty_like(x)
breaks: rotate: input-unchanged
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2].copy(), x[..., 1::2].copy()
    x[..., 0::2] = even * cos - odd * sin  # the mistake: into the caller's array
    x[..., 1::2] = even * sin + odd * cos
    return x
