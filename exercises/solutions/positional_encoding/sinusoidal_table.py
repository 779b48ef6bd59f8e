"""Reference solution: the sinusoidal positional encoding table (NumPy)."""

import numpy as np


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    pos = np.arange(max_len)[:, None]                         # (max_len, 1)
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)  # 2i / d_model: the even column index
    table = np.empty((max_len, d_model))
    table[:, 0::2] = np.sin(pos * omega)                      # broadcasts to (max_len, d_model / 2)
    table[:, 1::2] = np.cos(pos * omega)
    return table
