"""Fills masked scores with -inf and divides without a guard: a query whose keys are all
masked gets exp(-inf - (-inf)) = NaN.

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: a query with every key masked: zero weights, zero output, no NaN
message mentions: zero weights; NaN
breaks: scaled_dot_product_attention: all-masked
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the mistake: -inf - -inf
    weights = e / e.sum(axis=-1, keepdims=True)
    return weights @ v, weights
