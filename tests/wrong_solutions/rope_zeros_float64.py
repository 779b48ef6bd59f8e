"""Writes the result into np.zeros(x.shape), which is float64 whatever x is: float32 queries
come back as float64.

exercise: rotary_positions/rotate
caught by: keeps the dtype: float32 in, float32 out; float64 in, float64 out
message mentions: float32; np.empty_like(x)
breaks: rotate: dtype
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.zeros(x.shape)  # the mistake: float64, not x's dtype
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
