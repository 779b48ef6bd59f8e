"""LayerNorm with the unbiased variance (ddof=1), as np.var(ddof=1) or torch.var's default.

exercise: residual_and_layer_norm/layer_norm
caught by: shape of x; equals the course's LayerNorm on (B, T, d_model)
message mentions: unbiased; d_model - 1
breaks: layer_norm: value
"""

import numpy as np


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True, ddof=1)  # the mistake
    return (x - mean) / np.sqrt(var + eps) * weight + bias
