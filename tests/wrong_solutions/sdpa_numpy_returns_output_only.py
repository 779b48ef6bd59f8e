"""Returns the output alone, as the paper's Attention(Q, K, V) does, without the weights.

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)
message mentions: a pair (output, weights)
breaks: scaled_dot_product_attention: shapes
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isneginf(top), 0.0, top))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0.0, 1.0, total)
    return weights @ v  # the mistake: the weights are not returned
