"""A convolution with the kernel flipped, as in the textbook definition (sum_j x_{t-j} w_j):
nn.Conv1d and the layers of §4 do not flip.

exercise: why_self_attention/convolution
caught by: shape (B, T, d_out); equals the course's Convolution, k = 3
message mentions: flipped the kernel; cross-correlation
breaks: convolution: taps
"""

import numpy as np


def convolution(x, weight, bias, dilation=1):
    k = weight.shape[2]
    reach = (k - 1) // 2 * dilation
    padded = np.pad(x, [(0, 0), (reach, reach), (0, 0)])
    T = x.shape[1]
    flipped = weight[:, :, ::-1]  # the mistake: tap 0 now reads the latest position
    return bias + sum(padded[:, j * dilation:j * dilation + T] @ flipped[:, :, j].T for j in range(k))
