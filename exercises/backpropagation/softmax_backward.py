"""Exercise: the backward pass of the (masked) softmax, in NumPy.

Check your work:  python -m aiayn.grading backpropagation/softmax_backward
"""

import numpy as np


def softmax_backward(grad_weights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """dL/d(scores), given dL/d(weights) and weights = masked_softmax(scores, mask).

    The softmax runs over the LAST axis (the keys): each row of ``weights`` is one query's
    distribution over the keys. Its Jacobian is dp_i/ds_j = p_i (delta_ij - p_j), and every
    score of a row moves every weight of that row, not only its own. The weights hold
    everything: the scores and the mask are not needed.

    grad_weights, weights: arrays of the same shape (..., T_k), e.g. (B, H, T_q, T_k).

    Promises (the grader checks each one):
      - value: returns dL/d(scores), of the weights' shape: p * (g - sum over the row of g * p),
        the whole Jacobian, not its diagonal.
      - last-axis: the row sums run over the LAST axis (the keys), not over the queries.
      - masked: blocked keys (weight 0) get gradient 0, and a row whose keys are all blocked
        (all weights 0) gets zeros, not NaN.
      - leading-axes: any number of leading axes, one row (T_k,) included.
    """
    raise NotImplementedError
