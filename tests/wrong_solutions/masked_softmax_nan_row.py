"""The textbook masked softmax: -inf for blocked keys, then softmax. A row with every key
blocked is exp(-inf - (-inf)) = NaN.

exercise: scaled_dot_product_attention/masked_softmax
caught by: a row whose keys are all masked is all zeros, not NaN
message mentions: NaN; zero weights
breaks: masked_softmax: all-masked
"""

import numpy as np


def masked_softmax(scores, mask=None):
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))  # the mistake: max may be -inf
    return e / e.sum(axis=-1, keepdims=True)
