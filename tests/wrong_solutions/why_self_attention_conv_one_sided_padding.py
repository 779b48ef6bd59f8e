"""All k - 1 zeros padded before the sequence: a causal convolution, shifted against the
centred layer the exercise asks for.

exercise: why_self_attention/convolution
caught by: shape (B, T, d_out); equals the course's Convolution, k = 3
message mentions: shifted; causal convolution; at each end
breaks: convolution: taps
"""

import numpy as np


def convolution(x, weight, bias, dilation=1):
    k = weight.shape[2]
    span = (k - 1) * dilation
    padded = np.pad(x, [(0, 0), (span, 0), (0, 0)])  # the mistake: zeros on the left only
    T = x.shape[1]
    return bias + sum(padded[:, j * dilation:j * dilation + T] @ weight[:, :, j].T for j in range(k))
