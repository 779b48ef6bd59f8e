"""Forgets to divide the scores by sqrt(d_k).

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: scores are scaled by 1/√d_k
message mentions: did not scale; √d_k
breaks: scaled_dot_product_attention: scale
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2)  # the mistake: no / np.sqrt(d_k)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0.0, 1.0, total)
    return weights @ v, weights
