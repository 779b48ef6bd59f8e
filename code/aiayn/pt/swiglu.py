"""The SwiGLU feed-forward network (Shazeer, 2020), PyTorch: a gated variant of §3.3's FFN.

    FFN(x)        = max(0, x W1 + b1) W2 + b2                  (the paper)
    FFN_SwiGLU(x) = (Swish(x W1) * (x V)) W2,  Swish(z) = z sigmoid(z)

The second branch x V gates the first position by position and feature by feature. Three
matrices instead of two: at ``d_ff`` two thirds of the ReLU network's the parameters are
equal (``equal_parameter_width``). No biases, as in Shazeer's paper and Llama.
"""

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_positive, check_rank


def equal_parameter_width(d_ff: int) -> int:
    """The SwiGLU width whose three d_model x width matrices hold as many weights as the ReLU
    network's two d_model x d_ff ones: round(2 d_ff / 3) (its biases, d_ff + d_model, aside)."""
    check_positive("d_ff", d_ff)
    return max(1, round(2 * d_ff / 3))


def sigmoid(z: torch.Tensor) -> torch.Tensor:
    """1 / (1 + exp(-z)) (``torch.sigmoid``, which does not overflow)."""
    return torch.sigmoid(z)


class SwiGLUFeedForward(nn.Module):
    """(Swish(x W1) * (x V)) W2, applied to every position independently."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        check_positive("d_ff", d_ff)
        self.w_1 = nn.Linear(d_model, d_ff, bias=False)  # the Swish branch
        self.v = nn.Linear(d_model, d_ff, bias=False)    # the linear branch that gates it
        self.w_2 = nn.Linear(d_ff, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_rank("x", x, 3, "(B, T, d_model)")
        return self.w_2(F.silu(self.w_1(x)) * self.v(x))  # silu = Swish with beta 1
