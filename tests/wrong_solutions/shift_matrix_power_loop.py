"""Builds M_k as M_1 multiplied k times: right for k >= 1, the identity for a negative k
(range(k) is empty).

exercise: positional_encoding/shift_matrix
caught by: equals the course's M_k, for negative offsets too
message mentions: range(k)
breaks: shift_matrix: negative
"""

import numpy as np


def shift_matrix(k, d_model):
    w = 1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)
    one = np.zeros((d_model, d_model))
    for i, w_i in enumerate(w):
        c, s = np.cos(w_i), np.sin(w_i)
        one[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]
    m = np.eye(d_model)
    for _ in range(k):  # the mistake: nothing happens for k < 0
        m = one @ m
    return m
