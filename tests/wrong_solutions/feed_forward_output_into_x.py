"""Writes the output into x to save memory: it has x's shape, and the caller loses its x.

exercise: feed_forward_and_embeddings/feed_forward
caught by: leaves its inputs unchanged
message mentions: out=x
breaks: feed_forward: inputs-unchanged
"""

import numpy as np


def feed_forward(x, w1, b1, w2, b2):
    hidden = np.maximum(x @ w1.T + b1, 0.0)
    return np.add(hidden @ w2.T, b2, out=x)  # the mistake: the caller's x overwritten
