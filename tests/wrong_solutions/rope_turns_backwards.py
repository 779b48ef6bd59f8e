"""Turns every pair by -m theta_i (the signs of the sines exchanged). Still a rotation: the
lengths, position 0, the relative scores and the offset all hold; only the values differ.

exercise: rotary_positions/rotate
caught by: equals the course's rotation: pair i at position m turned by m theta_i
message mentions: the other way; [[cos, -sin], [sin, cos]]
breaks: rotate: value
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    out = np.empty_like(x)
    out[..., 0::2] = even * cos + odd * sin  # the mistake: the rotation by -m theta_i
    out[..., 1::2] = -even * sin + odd * cos
    return out
