"""Blocks the keys where the mask is True (nn.MultiheadAttention's convention).

exercise: scaled_dot_product_attention/masked_softmax
caught by: masked keys get exactly 0, True = may attend
message mentions: mask is inverted; True means
breaks: masked_softmax: mask
"""

import numpy as np


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)  # the mistake: True taken as "blocked"
    top = scores.max(axis=-1, keepdims=True)
    top = np.where(np.isneginf(top), 0.0, top)
    e = np.exp(scores - top)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0.0, 1.0, total)
