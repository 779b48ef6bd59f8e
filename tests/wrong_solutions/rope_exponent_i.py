"""Frequencies 10000^(-i/d_k) for i = 0 .. d_k/2 - 1: the pair's number over d_k, not the
even feature index 2i over d_k. Every pair turns too fast, the slowest only to 10000^(-1/2).

exercise: rotary_positions/rotate
caught by: equals the course's rotation: pair i at position m turned by m theta_i
message mentions: i/d_k; np.arange(0, d_k, 2)
breaks: rotate: value
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    theta = 10000.0 ** (-np.arange(d_k // 2) / d_k)  # the mistake: i/d_k, not 2i/d_k
    angle = np.arange(start, start + T)[:, None] * theta
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
