"""A shift matrix with the signs of the sines exchanged: M_{-k}, which moves back by k.

exercise: positional_encoding/shift_matrix
caught by: shape (d_model, d_model): moves every row of the table by k positions
message mentions: M_{-k}; sin(a + b)
breaks: shift_matrix: shift
"""

import numpy as np


def shift_matrix(k, d_model):
    angle = k * 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    cos, sin = np.cos(angle), np.sin(angle)
    even, odd = np.arange(0, d_model, 2), np.arange(1, d_model, 2)
    m = np.zeros((d_model, d_model))
    m[even, even], m[even, odd] = cos, -sin  # the mistake: the rotation the other way round
    m[odd, even], m[odd, odd] = sin, cos
    return m
