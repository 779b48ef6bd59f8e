"""Reads the mask the other way round (True = blocked, as in nn.MultiheadAttention).

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: masked keys get exactly zero weight (True = may attend)
message mentions: mask is inverted; True means
breaks: scaled_dot_product_attention: mask
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)  # the mistake: True taken as "blocked"
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isneginf(top), 0.0, top))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0.0, 1.0, total)
    return weights @ v, weights
