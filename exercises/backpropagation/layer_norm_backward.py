"""Exercise: the backward pass of LayerNorm, in NumPy.

Check your work:  python -m aiayn.grading backpropagation/layer_norm_backward
"""

import numpy as np


def layer_norm_backward(grad_y: np.ndarray, x: np.ndarray, weight: np.ndarray,
                        eps: float = 1e-5) -> tuple:
    """Gradients of y = (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) var
    over the LAST axis, as in aiayn.np.normalization.LayerNorm.

    grad_y: dL/dy, shape (..., d_model), e.g. (B, T, d_model); x: the input, same shape;
    weight: (d_model,); eps: the same eps as the forward pass.
    Returns (grad_x, grad_weight, grad_bias):
      grad_x       dL/dx, the shape of x. Every x_i of a row moves that row's mean and
                   variance, so every output of the row depends on it.
      grad_weight  (d_model,), summed over every position (all leading axes).
      grad_bias    (d_model,), likewise.
    """
    raise NotImplementedError
