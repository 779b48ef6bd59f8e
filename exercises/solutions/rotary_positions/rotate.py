"""Reference solution: rotary position embeddings, RoPE (NumPy)."""

import numpy as np


def rotate(x: np.ndarray, start: int = 0) -> np.ndarray:
    T, d_k = x.shape[-2], x.shape[-1]
    theta = 10000.0 ** (-np.arange(0, d_k, 2) / d_k)        # theta_i, one per pair
    angle = np.arange(start, start + T)[:, None] * theta     # (T, d_k / 2): m * theta_i
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]                   # (x_2i, x_2i+1) of every pair
    out = np.empty_like(x)                                   # a new array of x's dtype
    out[..., 0::2] = even * cos - odd * sin
    out[..., 1::2] = even * sin + odd * cos
    return out
