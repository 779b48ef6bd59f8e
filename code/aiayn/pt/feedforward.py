"""Position-wise feed-forward network (§3.3): FFN(x) = max(0, x W1 + b1) W2 + b2, PyTorch."""

import torch
from torch import nn

from .._checks import check_positive, check_rank, check_size


class PositionwiseFeedForward(nn.Module):
    """Two linear maps with a ReLU between, applied to every position independently."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        check_positive("d_ff", d_ff)
        self.w_1 = nn.Linear(d_model, d_ff)
        self.w_2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_rank("x", x, 3, "(B, T, d_model)")
        check_size("x", x, -1, self.w_1.in_features, "feature size")
        return self.w_2(torch.relu(self.w_1(x)))
