"""Attention's backward scaled by 1/d_k instead of 1/√d_k.

exercise: backpropagation/attention_backward
caught by: grad_k equals autograd: dK = dS^T Q / √d_k
message mentions: divided by d_k; 1/sqrt(d_k)
breaks: attention_backward: grad-k
"""

import numpy as np


def attention_backward(grad_out, q, k, v, weights):
    scale = 1.0 / q.shape[-1]  # the mistake: 1 / d_k
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)
    grad_scores = weights * (grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True))
    return grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale, grad_v
