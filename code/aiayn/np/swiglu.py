"""The SwiGLU feed-forward network (Shazeer, 2020), NumPy: a gated variant of §3.3's FFN.

    FFN(x)        = max(0, x W1 + b1) W2 + b2                  (the paper)
    FFN_SwiGLU(x) = (Swish(x W1) * (x V)) W2,  Swish(z) = z sigmoid(z)

The second branch x V gates the first position by position and feature by feature. Three
matrices instead of two: at ``d_ff`` two thirds of the ReLU network's the parameters are
equal (``equal_parameter_width``). No biases, as in Shazeer's paper and Llama.
"""

import numpy as np

from .._checks import check_positive, check_rank
from .nn import Linear, Module


def equal_parameter_width(d_ff: int) -> int:
    """The SwiGLU width whose three d_model x width matrices hold as many weights as the ReLU
    network's two d_model x d_ff ones: round(2 d_ff / 3) (its biases, d_ff + d_model, aside)."""
    check_positive("d_ff", d_ff)
    return max(1, round(2 * d_ff / 3))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)) without overflow for large negative z."""
    e = np.exp(-np.abs(z))
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


class SwiGLUFeedForward(Module):
    """(Swish(x W1) * (x V)) W2, applied to every position independently."""

    def __init__(self, d_model: int, d_ff: int):
        check_positive("d_ff", d_ff)
        self.w_1 = Linear(d_model, d_ff, bias=False)  # the Swish branch
        self.v = Linear(d_model, d_ff, bias=False)    # the linear branch that gates it
        self.w_2 = Linear(d_ff, d_model, bias=False)

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_rank("x", x, 3, "(B, T, d_model)")
        a, b = self.w_1(x), self.v(x)
        s = sigmoid(a)
        self.save_for_backward(a, b, s)
        return self.w_2(a * s * b)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/d(output) -> dL/dx. With h = Swish(a) b: dh/db = Swish(a), and
        dSwish/da = s + a s (1 - s), s = sigmoid(a). x fed both branches: its gradient is the sum."""
        a, b, s = self.saved()
        grad_h = self.w_2.backward(grad)
        grad_a = grad_h * b * (s + a * s * (1.0 - s))
        return self.w_1.backward(grad_a) + self.v.backward(grad_h * a * s)
