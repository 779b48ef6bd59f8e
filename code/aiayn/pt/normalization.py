"""Layer normalisation (Ba et al., 2016), the ``LayerNorm`` of §3.1, PyTorch."""

import torch
from torch import nn

from .._checks import check_positive, check_size


class LayerNorm(nn.Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis (biased variance).

    Written out rather than taken from ``nn.LayerNorm`` so the reader sees the formula;
    the tests show it equals ``nn.LayerNorm`` with the same weights."""

    def __init__(self, d_model: int, eps: float = 1e-5):
        super().__init__()
        check_positive("d_model", d_model)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
