"""Normalises the row sum by the row's total weight: 1 for a row that attends, 0/0 = NaN for a
row whose keys are all blocked.

exercise: backpropagation/softmax_backward
caught by: blocked keys get exactly 0; an all-masked row gets zeros, not NaN
message mentions: use only the weights
breaks: softmax_backward: masked
"""

import numpy as np


def softmax_backward(grad_weights, weights):
    row = (grad_weights * weights).sum(axis=-1, keepdims=True)
    row = row / weights.sum(axis=-1, keepdims=True)  # the mistake: 0/0 on an all-masked row
    return weights * (grad_weights - row)
