"""Contiguous taps whatever the dilation: right for D = 1, wrong for ByteNet's dilated layers.

exercise: why_self_attention/convolution
caught by: wider kernels and dilation D: taps D positions apart
message mentions: ignored the dilation; D positions apart
breaks: convolution: dilation
"""

import numpy as np


def convolution(x, weight, bias, dilation=1):
    k = weight.shape[2]
    reach = (k - 1) // 2  # the mistake: dilation never used
    padded = np.pad(x, [(0, 0), (reach, reach), (0, 0)])
    T = x.shape[1]
    return bias + sum(padded[:, j:j + T] @ weight[:, :, j].T for j in range(k))
