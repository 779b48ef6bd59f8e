"""LayerNorm's backward with the mean's path but without the variance's.

exercise: backpropagation/layer_norm_backward
caught by: grad_x equals autograd through LayerNorm (random weight and bias)
message mentions: variance's path; x_hat * mean(g * x_hat)
breaks: layer_norm_backward: grad-x
"""

import numpy as np


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    positions = tuple(range(x.ndim - 1))
    g = grad_y * weight
    grad_x = (g - g.mean(axis=-1, keepdims=True)) / sigma  # the mistake: no variance term
    return grad_x, (grad_y * x_hat).sum(axis=positions), grad_y.sum(axis=positions)
