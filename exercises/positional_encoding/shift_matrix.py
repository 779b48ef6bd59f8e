"""Exercise: the matrix M_k with PE_{pos+k} = M_k PE_pos for every pos (§3.5), in NumPy.

Check your work:  python -m aiayn.grading positional_encoding/shift_matrix
"""

import numpy as np


def shift_matrix(k: int, d_model: int) -> np.ndarray:
    """M_k of shape (d_model, d_model) such that PE_{pos+k} = M_k @ PE_pos for every position.

    PE_pos is one row of the course's table (a column vector here): columns 2i and 2i+1 hold
    sin(pos w_i) and cos(pos w_i), with w_i = 1 / 10000^(2i / d_model).
    M_k is block-diagonal: one 2x2 rotation by the angle k w_i on rows and columns (2i, 2i+1).
    Use the addition theorems sin(a + b) and cos(a + b).

    Promises (the grader checks each one):
      - shift: returns M_k, (d_model, d_model), with PE_{pos+k} = M_k @ PE_pos at every
        position.
      - negative: any integer k, negative included (M_{-k} moves back by k).
      - float64: the array's dtype is float64.
    """
    raise NotImplementedError
