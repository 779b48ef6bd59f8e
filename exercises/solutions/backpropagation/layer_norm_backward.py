"""Reference solution: the backward pass of LayerNorm (NumPy)."""

import numpy as np


def layer_norm_backward(grad_y: np.ndarray, x: np.ndarray, weight: np.ndarray,
                        eps: float = 1e-5) -> tuple:
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    positions = tuple(range(x.ndim - 1))  # every axis but the features
    grad_weight = (grad_y * x_hat).sum(axis=positions)
    grad_bias = grad_y.sum(axis=positions)
    g = grad_y * weight  # dL/dx_hat
    # direct path, minus the mean's path, minus the variance's path
    grad_x = (g - g.mean(axis=-1, keepdims=True)
              - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / sigma
    return grad_x, grad_weight, grad_bias
