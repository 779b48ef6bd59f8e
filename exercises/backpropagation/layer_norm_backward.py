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
    Returns (grad_x, grad_weight, grad_bias).

    Promises (the grader checks each one):
      - grad-x: grad_x = dL/dx, the shape of x, through the direct path and through the
        row's mean and variance (every x_i of a row moves both).
      - grad-weight: grad_weight (d_model,) = dL/dy * x_hat summed over every position.
      - grad-bias: grad_bias (d_model,) = dL/dy summed over every position.
      - eps: sigma = sqrt(var + eps) with the eps given, as in the forward pass (not std + eps).
      - leading-axes: any number of leading axes: (T, d_model) as well as (B, T, d_model).
    """
    raise NotImplementedError
