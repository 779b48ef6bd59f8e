"""Divides by (std + eps) where the forward pass divides by sqrt(var + eps).

exercise: backpropagation/layer_norm_backward
caught by: small activations (std ~ 1e-3): sigma = sqrt(var + eps), eps inside the root
message mentions: std + eps; eps inside the root
breaks: layer_norm_backward: eps
"""

import numpy as np


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    sigma = x.std(axis=-1, keepdims=True) + eps  # the mistake: eps outside the root
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    g = grad_y * weight
    grad_x = (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True)) / sigma
    axes = tuple(range(x.ndim - 1))
    return grad_x, (grad_y * x_hat).sum(axis=axes), grad_y.sum(axis=axes)
