"""Takes mean and variance over axis 2, the features of a (B, T, d_model) input only.

exercise: residual_and_layer_norm/layer_norm
caught by: works for any number of leading axes, e.g. (T, d_model)
message mentions: axis=-1
breaks: layer_norm: leading-axes
"""

import numpy as np


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=2, keepdims=True)  # the mistake: axis 2, not -1
    var = x.var(axis=2, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias
