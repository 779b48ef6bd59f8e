"""Attention's backward without the 1/√d_k: the scale of the forward pass forgotten on the way back.

exercise: backpropagation/attention_backward
caught by: grad_q equals autograd: dQ = dS K / √d_k
message mentions: 1/sqrt(d_k); sqrt(d_k) times too large
breaks: attention_backward: grad-q
"""

import numpy as np


def attention_backward(grad_out, q, k, v, weights):
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)
    grad_scores = weights * (grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True))
    grad_q = grad_scores @ k  # the mistake: no / sqrt(d_k)
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q
    return grad_q, grad_k, grad_v
