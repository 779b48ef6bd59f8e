"""Attention's backward whose softmax step keeps only the Jacobian's diagonal, P (1 - P) dP.

exercise: backpropagation/attention_backward
caught by: grad_k equals autograd: dK = dS^T Q / √d_k
message mentions: diagonal; row sum
breaks: attention_backward: grad-k
"""

import math

import numpy as np


def attention_backward(grad_out, q, k, v, weights):
    scale = 1.0 / math.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)
    grad_scores = weights * (1 - weights) * grad_weights  # the mistake: the diagonal only
    return grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale, grad_v
