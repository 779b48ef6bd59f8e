"""Reference solution: the shift matrix M_k of the sinusoidal encoding (NumPy)."""

import numpy as np


def shift_matrix(k: int, d_model: int) -> np.ndarray:
    angle = k * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # k w_i, one per pair
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    m = np.zeros((d_model, d_model))
    m[even, even], m[even, odd] = cos, sin    # sin(a + b) = sin a cos b + cos a sin b
    m[odd, even], m[odd, odd] = -sin, cos     # cos(a + b) = cos a cos b - sin a sin b
    return m
