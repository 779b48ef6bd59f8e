"""LayerNorm's backward whose weight gradient is the sum of dL/dy, forgetting that the weight
multiplies x_hat: the bias's gradient twice.

exercise: backpropagation/layer_norm_backward
caught by: grad_weight = sum of dL/dy * x_hat, grad_bias = sum of dL/dy, over every position
message mentions: grad_weight is the sum of dL/dy * x_hat; grad_bias
breaks: layer_norm_backward: grad-weight
"""

import numpy as np


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    positions = tuple(range(x.ndim - 1))
    g = grad_y * weight
    grad_x = (g - g.mean(axis=-1, keepdims=True) - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, grad_y.sum(axis=positions), grad_y.sum(axis=positions)  # the mistake: no x_hat
