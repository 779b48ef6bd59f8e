"""Builds M_k in float32.

exercise: positional_encoding/shift_matrix
caught by: shape (d_model, d_model): moves every row of the table by k positions
message mentions: float64
breaks: shift_matrix: float64
"""

import numpy as np


def shift_matrix(k, d_model):
    m = np.zeros((d_model, d_model), dtype=np.float32)  # the mistake: float32
    for i in range(d_model // 2):
        angle = k / 10000.0 ** (2 * i / d_model)
        c, s = np.cos(angle), np.sin(angle)
        m[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    return m
