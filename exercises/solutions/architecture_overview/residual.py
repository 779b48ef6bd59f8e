"""Reference solution: the residual wrapper, Post-LN and Pre-LN (NumPy)."""

import numpy as np


def residual(x: np.ndarray, sublayer, norm, dropout, norm_first: bool) -> np.ndarray:
    if norm_first:  # Pre-LN: the residual stream itself is never normalised
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))  # Post-LN, the paper: normalise the sum
