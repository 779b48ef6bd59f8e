"""Mixes the two layouts of RoPE's code: cos and sin repeated per neighbouring pair (feature j
gets the angle of pair j // 2) but the partner taken from the other half (rotate_half). The two
features of a pair then turn by different angles: q_m . k_n no longer depends on m - n alone.

exercise: rotary_positions/rotate
caught by: q_m . k_n depends on m - n only, at positions into the thousands
message mentions: mixed two layouts; different angles
breaks: rotate: relative
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos = np.repeat(np.cos(angle), 2, axis=-1).astype(x.dtype)  # (T, d_k): c0 c0 c1 c1 ...
    sin = np.repeat(np.sin(angle), 2, axis=-1).astype(x.dtype)
    partner = np.concatenate([-x[..., d_k // 2:], x[..., :d_k // 2]], axis=-1)  # the mistake
    return x * cos + partner * sin
