"""Masks by writing -inf into the caller's array.

exercise: scaled_dot_product_attention/masked_softmax
caught by: leaves its input unchanged
message mentions: caller's array; np.where
breaks: masked_softmax: input-unchanged
"""

import numpy as np


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores[~np.broadcast_to(mask, scores.shape)] = -np.inf  # the mistake: in place
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0.0, 1.0, total)
