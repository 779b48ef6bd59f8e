"""Exercise: the position-wise feed-forward network of §3.3, in NumPy.

Check your work:  python -m aiayn.grading feed_forward_and_embeddings/feed_forward
"""

import numpy as np


def feed_forward(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
                 b2: np.ndarray) -> np.ndarray:
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, applied to every position independently.

    x:  (..., d_model), e.g. (B, T, d_model).
    w1: (d_ff, d_model), b1: (d_ff,); w2: (d_model, d_ff), b2: (d_model,).

    Promises (the grader checks each one):
      - value: returns max(0, x W_1 + b_1) W_2 + b_2, an array of the shape of ``x``.
      - layout: the weights are in PyTorch's layout, (out_features, in_features), as in
        ``nn.Linear.weight`` and the course's ``Linear``: the paper's W_1 is ``w1.T``, also
        when d_ff = d_model.
      - position-wise: every position independently, for any number of leading axes.
      - inputs-unchanged: the inputs are not modified in place.
    """
    raise NotImplementedError
