"""Reference solution: scaled dot-product attention in NumPy."""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    d_k = q.shape[-1]
    # swapaxes, not .T: on a 4-D array .T reverses ALL axes.
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(d_k)  # (B, H, T_q, T_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)  # all-masked row: no inf - inf
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0.0, 1.0, total)  # all-masked row: 0 / 1 = 0
    return weights @ v, weights
