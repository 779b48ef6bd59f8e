"""Normalises with a LayerNorm of its own instead of calling `norm`, the one given (and so
loses the layer's gain and bias).

exercise: architecture_overview/residual
caught by: calls the norm, sublayer and dropout it is given, whatever they compute
message mentions: formula of your own; call `norm`
breaks: residual: given-functions
"""

import numpy as np


def layer_norm(h, eps=1e-5):
    return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + eps)


def residual(x, sublayer, norm, dropout, norm_first):
    if norm_first:  # the mistake: layer_norm where norm was given
        return x + dropout(sublayer(layer_norm(x)))
    return layer_norm(x + dropout(sublayer(x)))
