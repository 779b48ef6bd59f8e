"""exp(scores) without subtracting the row maximum: overflows for large scores.

exercise: scaled_dot_product_attention/masked_softmax
caught by: huge scores do not overflow (subtract the row maximum)
message mentions: overflow; maximum
breaks: masked_softmax: no-overflow
"""

import numpy as np


def masked_softmax(scores, mask=None):
    e = np.exp(scores)  # the mistake: exp(1000) = inf
    if mask is not None:
        e = np.where(mask, e, 0.0)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0.0, 1.0, total)
