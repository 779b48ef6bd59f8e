"""Right numbers, but the softmax is the course's masked_softmax, imported.

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: computes the softmax itself, with no function of the course (aiayn)
message mentions: masked_softmax; write the softmax here
breaks: scaled_dot_product_attention: own-softmax
"""

import numpy as np

from aiayn.np.attention import masked_softmax


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)  # the mistake: the course's implementation
    return weights @ v, weights
