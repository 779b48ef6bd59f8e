"""Reference solution: a 1-D convolution over time, centred, zero-padded, dilated (NumPy)."""

import numpy as np


def convolution(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, dilation: int = 1) -> np.ndarray:
    d_out, d_in, k = weight.shape
    reach = (k - 1) // 2 * dilation
    padded = np.pad(x, [(0, 0), (reach, reach), (0, 0)])  # zeros at both ends: T stays T
    T = x.shape[1]
    y = np.zeros((x.shape[0], T, d_out)) + bias
    for j in range(k):  # tap j reads position t + j D - reach: a shifted slice, one product
        y += padded[:, j * dilation:j * dilation + T] @ weight[:, :, j].T
    return y
