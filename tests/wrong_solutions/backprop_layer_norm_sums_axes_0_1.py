"""Sums the parameter gradients over axes (0, 1), right for (B, T, d_model) only.

exercise: backpropagation/layer_norm_backward
caught by: works for a 2-D input (T, d_model)
message mentions: tuple(range(x.ndim - 1))
breaks: layer_norm_backward: leading-axes
"""

import numpy as np


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    g = grad_y * weight
    grad_x = (g - g.mean(-1, keepdims=True) - x_hat * (g * x_hat).mean(-1, keepdims=True)) / sigma
    # the mistake: axes (0, 1) are the leading axes of a 3-D input only
    return grad_x, (grad_y * x_hat).sum(axis=(0, 1)), grad_y.sum(axis=(0, 1))
