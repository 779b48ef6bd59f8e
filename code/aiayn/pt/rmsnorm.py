"""RMSNorm (Zhang & Sennrich, 2019): LayerNorm without the mean and without the bias, PyTorch.

LayerNorm centres each position's features and divides by their standard deviation; RMSNorm
only divides by their root mean square. One statistic instead of two, no shift, ``d_model``
parameters instead of ``2 d_model``: Llama, T5 and most models since use it.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_positive, check_size


class RMSNorm(nn.Module):
    """x / sqrt(mean(x^2) + eps) * weight over the last axis; ``torch.nn.RMSNorm`` with ``eps``.

    ``F.rms_norm`` computes it (one call, as ``LayerNorm`` calls ``F.layer_norm``); the tests
    check it against the NumPy twin, which writes the formula out, and ``torch.nn.RMSNorm``."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        check_positive("d_model", d_model)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        return F.rms_norm(x, self.weight.shape, self.weight, self.eps)
