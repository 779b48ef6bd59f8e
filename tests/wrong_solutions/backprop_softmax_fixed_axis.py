"""Sums over axis 3, the keys of a (B, H, T_q, T_k) array, and of nothing else.

exercise: backpropagation/softmax_backward
caught by: works for any number of leading axes, e.g. one row (T_k,)
message mentions: axis=-1
breaks: softmax_backward: leading-axes
"""

import numpy as np


def softmax_backward(grad_weights, weights):
    row = (grad_weights * weights).sum(axis=3, keepdims=True)  # the mistake: axis 3, not -1
    return weights * (grad_weights - row)
