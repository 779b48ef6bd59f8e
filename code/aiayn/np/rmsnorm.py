"""RMSNorm (Zhang & Sennrich, 2019): LayerNorm without the mean and without the bias, NumPy.

LayerNorm centres each position's features and divides by their standard deviation; RMSNorm
only divides by their root mean square. One statistic instead of two, no shift, ``d_model``
parameters instead of ``2 d_model``: Llama, T5 and most models since use it.
"""

import numpy as np

from .._checks import check_positive, check_size
from .nn import Module


class RMSNorm(Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last axis; ``torch.nn.RMSNorm`` with ``eps``."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        check_positive("d_model", d_model)
        self.eps = eps
        self.weight = np.ones(d_model)

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        rms = np.sqrt((x * x).mean(axis=-1, keepdims=True) + self.eps)  # eps inside the root
        x_hat = x / rms
        self.save_for_backward(x_hat, rms)
        return x_hat * self.weight

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/dy -> dL/dx, and the gradient of weight (a sum over all positions).

        Every x_i moves the root mean square, and through it every output of its row:
            dL/dx = (g - x_hat * mean(g * x_hat)) / rms,   g = dL/dy * weight,
        LayerNorm's gradient without the term of the mean."""
        x_hat, rms = self.saved()
        self.add_grad("weight", (grad * x_hat).sum(axis=tuple(range(grad.ndim - 1))))
        g = grad * self.weight
        return (g - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / rms
