"""Stacks the two turned features of each pair on a new last axis and forgets to flatten it:
(..., T, d_k/2, 2) instead of (..., T, d_k). The numbers are right.

exercise: rotary_positions/rotate
caught by: returns x's shape (..., T, d_k) for inputs of 2, 3 and 4 axes
message mentions: stacked; (..., T, d_k)
breaks: rotate: shape
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return np.stack([even * cos - odd * sin, even * sin + odd * cos], axis=-1)  # the mistake
