"""Builds the table in float32.

exercise: positional_encoding/sinusoidal_table
caught by: shape (max_len, d_model), float64, row 0 is (0, 1, 0, 1, ...)
message mentions: float64
breaks: sinusoidal_table: shape
"""

import numpy as np


def sinusoidal_table(max_len, d_model):
    pos = np.arange(max_len, dtype=np.float32)[:, None]  # the mistake: float32 throughout
    w = (1.0 / 10000.0 ** (np.arange(0, d_model, 2) / d_model)).astype(np.float32)
    table = np.zeros((max_len, d_model), dtype=np.float32)
    table[:, 0::2], table[:, 1::2] = np.sin(pos * w), np.cos(pos * w)
    return table
