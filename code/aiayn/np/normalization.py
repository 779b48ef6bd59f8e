"""Layer normalisation (Ba et al., 2016), the ``LayerNorm`` of §3.1, NumPy."""

import numpy as np

from .._checks import check_positive, check_size
from .nn import Module


class LayerNorm(Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance).

    Not ``(x - mean) / (std + eps)``: that variant, common in tutorials, differs from
    ``torch.nn.LayerNorm`` by up to ~eps/std relative error and breaks an exact comparison."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        check_positive("d_model", d_model)
        self.eps = eps
        self.weight = np.ones(d_model)
        self.bias = np.zeros(d_model)

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        mean = x.mean(axis=-1, keepdims=True)
        var = x.var(axis=-1, keepdims=True)
        sigma = np.sqrt(var + self.eps)  # eps inside the root
        x_hat = (x - mean) / sigma
        self.save_for_backward(x_hat, sigma)
        return x_hat * self.weight + self.bias

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/dy -> dL/dx, and the gradients of weight and bias (sums over all positions).

        Every x_i moves the mean and the variance, and through them every output of its row:
            dL/dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sigma,   g = dL/dx_hat = dL/dy * weight,
        with sigma = sqrt(var + eps) and the means over the features.
        The first term is the direct path, the second the mean's, the third the variance's."""
        x_hat, sigma = self.saved()
        positions = tuple(range(grad.ndim - 1))
        self.add_grad("weight", (grad * x_hat).sum(axis=positions))
        self.add_grad("bias", grad.sum(axis=positions))
        g = grad * self.weight
        return (g - g.mean(axis=-1, keepdims=True)
                - x_hat * (g * x_hat).mean(axis=-1, keepdims=True)) / sigma
