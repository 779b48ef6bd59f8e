"""Reference solution: the backward pass of scaled dot-product attention (NumPy)."""

import math

import numpy as np


def attention_backward(grad_out: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                       weights: np.ndarray) -> tuple:
    scale = 1.0 / math.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out      # out = P V  ->  dV = P^T dO
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)      #                dP = dO V^T
    row_sum = (grad_weights * weights).sum(axis=-1, keepdims=True)
    grad_scores = weights * (grad_weights - row_sum)      # the softmax's backward
    grad_q = grad_scores @ k * scale                      # S = Q K^T / sqrt(d_k)
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q * scale
    return grad_q, grad_k, grad_v
