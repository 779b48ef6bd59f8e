"""Exercise: the sinusoidal positional encoding table of §3.5 (NumPy).

Check your work:  python -m aiayn.grading positional_encoding/sinusoidal_table
"""

import numpy as np


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d_model)).

    max_len: number of positions, pos = 0 .. max_len - 1 (rows).
    d_model: even number of dimensions (columns). No loop over positions is needed.

    Promises (the grader checks each one):
      - shape: returns a float64 array of shape (max_len, d_model).
      - value: pair i occupies columns 2i (sin) and 2i+1 (cos), i = 0 .. d_model/2 - 1,
        interleaved as in the paper (not all sines first), at every position.
    """
    raise NotImplementedError
