"""Position-wise feed-forward network (§3.3): FFN(x) = max(0, x W1 + b1) W2 + b2, NumPy."""

import numpy as np

from .._checks import check_positive, check_rank
from .nn import Linear, Module


class PositionwiseFeedForward(Module):
    """Two linear maps with a ReLU between, applied to every position independently."""

    def __init__(self, d_model: int, d_ff: int):
        check_positive("d_ff", d_ff)
        self.w_1 = Linear(d_model, d_ff)
        self.w_2 = Linear(d_ff, d_model)

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_rank("x", x, 3, "(B, T, d_model)")
        hidden = np.maximum(self.w_1(x), 0.0)
        self.save_for_backward(hidden)
        return self.w_2(hidden)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/d(output) -> dL/dx. ReLU passes the gradient where its input was positive and
        blocks it elsewhere (at exactly 0 too, as torch.relu does)."""
        (hidden,) = self.saved()
        return self.w_1.backward(self.w_2.backward(grad) * (hidden > 0))
