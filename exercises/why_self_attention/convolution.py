"""Exercise: the convolutional layer of Table 1 (§4), a 1-D convolution over time, in NumPy.

Check your work:  python -m aiayn.grading why_self_attention/convolution
"""

import numpy as np


def convolution(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, dilation: int = 1) -> np.ndarray:
    """y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j for every position t, j = 0 .. k-1.

    x:      (B, T, d_in)          the sequence (batch first, like the rest of the course)
    weight: (d_out, d_in, k)      nn.Conv1d's layout: weight[:, :, j] is tap j, W_j^T
    bias:   (d_out,)
    dilation: D, the distance between neighbouring taps (1: contiguous).
    The kernel is centred on t (k is odd).

    Promises (the grader checks each one):
      - same-length: returns (B, T, d_out), the same length T; positions before the first and
        after the last count as zeros.
      - taps: tap j multiplies position t + (j - (k-1)/2) D, as torch.nn.Conv1d does: no
        flipping.
      - dilation: neighbouring taps are D positions apart.
      - inputs-unchanged: the inputs are not modified in place.
    """
    raise NotImplementedError
