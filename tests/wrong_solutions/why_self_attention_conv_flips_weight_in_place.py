"""Flips the kernel in place (the textbook convolution's flip), then reads the taps in reverse
to undo it: right numbers, and the caller's weight left flipped.

exercise: why_self_attention/convolution
caught by: leaves its inputs unchanged
message mentions: in place
breaks: convolution: inputs-unchanged
"""

import numpy as np


def convolution(x, weight, bias, dilation=1):
    weight[...] = weight[:, :, ::-1]  # the mistake: the caller's weight flipped
    k, T = weight.shape[2], x.shape[1]
    reach = (k - 1) // 2 * dilation
    padded = np.pad(x, [(0, 0), (reach, reach), (0, 0)])
    return bias + sum(padded[:, j * dilation:j * dilation + T] @ weight[:, :, k - 1 - j].T
                      for j in range(k))
