"""Attention's backward that takes dP for dS: the softmax between scores and weights forgotten.

exercise: backpropagation/attention_backward
caught by: grad_q equals autograd: dQ = dS K / √d_k
message mentions: dP as if it were dS; softmax
breaks: attention_backward: grad-q
"""

import math

import numpy as np


def attention_backward(grad_out, q, k, v, weights):
    scale = 1.0 / math.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out
    grad_scores = grad_out @ np.swapaxes(v, -1, -2)  # the mistake: this is dP, not dS
    return grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale, grad_v
