"""Writes the two maps as einsums over exactly three axes: (B, T, d_model) only.

exercise: feed_forward_and_embeddings/feed_forward
caught by: position-wise: works for (T, d_model) and for one position alone
message mentions: not a fixed number of axes
breaks: feed_forward: position-wise
"""

import numpy as np


def feed_forward(x, w1, b1, w2, b2):
    hidden = np.maximum(np.einsum("btd,fd->btf", x, w1) + b1, 0.0)  # the mistake: b, t, d
    return np.einsum("btf,df->btd", hidden, w2) + b2
