"""Centres and scales x in place to save memory: the caller's activations are gone.

exercise: residual_and_layer_norm/layer_norm
caught by: leaves x unchanged
message mentions: x -= mean
breaks: layer_norm: input-unchanged
"""

import numpy as np


def layer_norm(x, weight, bias, eps=1e-5):
    std = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x -= x.mean(axis=-1, keepdims=True)  # the mistake: the caller's x changed
    x /= std
    return x * weight + bias
