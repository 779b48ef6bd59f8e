"""A sinusoidal table whose frequencies use 10000^(i/d_model) instead of 10000^(2i/d_model).

exercise: positional_encoding/sinusoidal_table
caught by: equals the paper's sinusoids, PE(pos, 2i) = sin, PE(pos, 2i+1) = cos
message mentions: 2i/d_model; exponent
breaks: sinusoidal_table: value
"""

import numpy as np


def sinusoidal_table(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    omega = 10000.0 ** (-np.arange(d_model // 2) / d_model)  # the mistake: i, not 2i
    table = np.empty((max_len, d_model))
    table[:, 0::2] = np.sin(pos * omega)
    table[:, 1::2] = np.cos(pos * omega)
    return table
