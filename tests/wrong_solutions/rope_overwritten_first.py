"""Writes the pair's first feature, then computes the second from the already turned first
one: no rotation, the pairs change length (position 0 still comes back unchanged).

exercise: rotary_positions/rotate
caught by: every pair (x_2i, x_2i+1) keeps its length
message mentions: already replaced; the old x_2i
breaks: rotate: lengths
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    out = x.copy()
    out[..., 0::2] = out[..., 0::2] * cos - out[..., 1::2] * sin
    out[..., 1::2] = out[..., 0::2] * sin + out[..., 1::2] * cos  # the mistake: the new x_2i
    return out
