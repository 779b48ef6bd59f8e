"""Reads the weights as (in, out), the paper's W_1, so x @ w1 where the layout asks for x @ w1.T.

exercise: feed_forward_and_embeddings/feed_forward
caught by: square weights (d_ff = d_model): the (out, in) layout still matters
message mentions: (out_features, in_features)
breaks: feed_forward: layout
"""

import numpy as np


def feed_forward(x, w1, b1, w2, b2):
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2  # the mistake: w1, w2 not transposed
