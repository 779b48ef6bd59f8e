"""The softmax's backward with its row sum over the queries (axis -2) instead of the keys.

exercise: backpropagation/softmax_backward
caught by: shape of the weights; equals autograd through the softmax over the keys
message mentions: queries (axis -2); LAST axis
breaks: softmax_backward: last-axis
"""


def softmax_backward(grad_weights, weights):
    row_sum = (grad_weights * weights).sum(axis=-2, keepdims=True)  # the mistake: axis -2
    return weights * (grad_weights - row_sum)
