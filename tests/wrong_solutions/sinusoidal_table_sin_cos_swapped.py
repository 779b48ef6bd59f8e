"""A sinusoidal table with cos on the even columns and sin on the odd ones.

exercise: positional_encoding/sinusoidal_table
caught by: equals the paper's sinusoids, PE(pos, 2i) = sin, PE(pos, 2i+1) = cos
message mentions: swapped; even columns
breaks: sinusoidal_table: value
"""

import numpy as np


def sinusoidal_table(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    omega = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    table = np.empty((max_len, d_model))
    table[:, 0::2] = np.cos(pos * omega)  # the mistake
    table[:, 1::2] = np.sin(pos * omega)
    return table
