"""LayerNorm's backward that treats the mean and the variance as constants: g * weight / sigma.

exercise: backpropagation/layer_norm_backward
caught by: grad_x equals autograd through LayerNorm (random weight and bias)
message mentions: mean and the variance as constants; variance's path
breaks: layer_norm_backward: grad-x
"""

import numpy as np


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    positions = tuple(range(x.ndim - 1))
    grad_x = grad_y * weight / sigma  # the mistake: mean and variance do not depend on x?
    return grad_x, (grad_y * x_hat).sum(axis=positions), grad_y.sum(axis=positions)
