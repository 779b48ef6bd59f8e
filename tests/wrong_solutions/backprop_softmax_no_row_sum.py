"""The softmax's backward as p * g, the rule of an elementwise exp: the row sum is forgotten.

exercise: backpropagation/softmax_backward
caught by: shape of the weights; equals autograd through the softmax over the keys
message mentions: p * g; row sum
breaks: softmax_backward: value
"""


def softmax_backward(grad_weights, weights):
    return weights * grad_weights  # the mistake: no "- sum_i g_i p_i"
