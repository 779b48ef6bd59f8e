"""LayerNorm with its statistics over the batch axis (axis 0), i.e. BatchNorm's axis.

exercise: residual_and_layer_norm/layer_norm
caught by: shape of x; equals the course's LayerNorm on (B, T, d_model)
message mentions: batch axis; BatchNorm
breaks: layer_norm: value
"""

import numpy as np


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=0, keepdims=True)  # the mistake: over the sentences, not the features
    var = x.var(axis=0, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias
