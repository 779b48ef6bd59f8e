"""Normalises the softmax's backward by each row's sum of weights: 1 for a row that attends,
0/0 = NaN for a query whose keys are all blocked.

exercise: backpropagation/attention_backward
caught by: masked keys get no gradient; an all-masked query gets zeros, not NaN
message mentions: weights alone
breaks: attention_backward: masked
"""

import numpy as np


def attention_backward(grad_out, q, k, v, weights):
    scale = 1.0 / np.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)
    row = (grad_weights * weights).sum(axis=-1, keepdims=True)
    row = row / weights.sum(axis=-1, keepdims=True)  # the mistake: 0/0 on an all-masked row
    grad_scores = weights * (grad_weights - row)
    return grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale, grad_v
