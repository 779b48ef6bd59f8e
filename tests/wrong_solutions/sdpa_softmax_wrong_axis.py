"""Takes the softmax over the queries axis (-2) instead of the keys axis (-1).

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: each query's weights sum to 1 over the keys (softmax over the last axis)
message mentions: axis; LAST axis
breaks: scaled_dot_product_attention: softmax
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-2, keepdims=True))  # the mistake: axis=-2
    weights = e / e.sum(axis=-2, keepdims=True)
    return weights @ v, weights
