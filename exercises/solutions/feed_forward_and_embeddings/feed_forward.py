"""Reference solution: the position-wise feed-forward network (NumPy)."""

import numpy as np


def feed_forward(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
                 b2: np.ndarray) -> np.ndarray:
    hidden = np.maximum(x @ w1.T + b1, 0.0)  # (..., d_ff); .T: weights are (out, in)
    return hidden @ w2.T + b2                # (..., d_model); no ReLU after the second map
