"""Layer normalisation (Ba et al., 2016), the ``LayerNorm`` of §3.1, PyTorch."""

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_positive, check_size


class LayerNorm(nn.Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance).

    The NumPy twin writes the formula out. Here ``F.layer_norm`` computes it, one operator
    forwards and one backwards where the formula written out in PyTorch runs 8 and 21, each a
    pass over x and, on a GPU, a kernel launched from Python: the residual_and_layer_norm chapter
    counts them. The tests show that this equals the NumPy twin and ``nn.LayerNorm``."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        check_positive("d_model", d_model)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, self.eps)
