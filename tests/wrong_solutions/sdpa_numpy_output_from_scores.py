"""Multiplies the values by the scaled scores, not by the weights the softmax made of them.

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: output is weights @ V
message mentions: multiply the weights by the values
breaks: scaled_dot_product_attention: output
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    masked = scores if mask is None else np.where(mask, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True)
    e = np.exp(masked - np.where(np.isneginf(top), 0.0, top))
    total = e.sum(axis=-1, keepdims=True)
    weights = e / np.where(total == 0.0, 1.0, total)
    return scores @ v, weights  # the mistake: scores @ v, not weights @ v
