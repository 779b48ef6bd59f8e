"""The softmax's backward with the Jacobian's diagonal only, p (1 - p) g: as if each score
moved its own weight alone.

exercise: backpropagation/softmax_backward
caught by: shape of the weights; equals autograd through the softmax over the keys
message mentions: diagonal; off-diagonal
breaks: softmax_backward: value
"""


def softmax_backward(grad_weights, weights):
    return weights * (1 - weights) * grad_weights  # the mistake: dp_j/ds_j only
