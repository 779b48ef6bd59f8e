"""Ignores start: every call turns its first vector as position 0, so a cached decoder's new
token is turned as if it stood at the beginning of the sentence.

exercise: rotary_positions/rotate
caught by: rotate(x[..., s:, :], start=s) equals rotate(x)[..., s:, :], one new position too
message mentions: ignored start; start + 1
breaks: rotate: start
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)  # the mistake
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
