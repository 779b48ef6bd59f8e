"""Reference solution: the backward pass of the (masked) softmax (NumPy)."""

import numpy as np


def softmax_backward(grad_weights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    # J^T g with J = diag(p) - p p^T: p * g minus p times the row's sum of g * p.
    row_sum = (grad_weights * weights).sum(axis=-1, keepdims=True)  # one number per query
    return weights * (grad_weights - row_sum)  # p = 0 (blocked keys) gives exactly 0
