"""Normalises over the queries axis (-2): each key's weights sum to 1 instead of each query's.

exercise: scaled_dot_product_attention/masked_softmax
caught by: without a mask it is the softmax over the last axis
message mentions: LAST axis
breaks: masked_softmax: softmax
"""

import numpy as np


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    top = scores.max(axis=-2, keepdims=True)  # the mistake: axis=-2, the queries
    top = np.where(np.isneginf(top), 0.0, top)
    e = np.exp(scores - top)
    total = e.sum(axis=-2, keepdims=True)
    return e / np.where(total == 0.0, 1.0, total)
