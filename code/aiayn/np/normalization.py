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
        return (x - mean) / np.sqrt(var + self.eps) * self.weight + self.bias
