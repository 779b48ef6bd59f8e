"""Reference solution: a softmax that respects a mask (NumPy)."""

import numpy as np


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)  # a new array: the caller's stays intact
    row_max = scores.max(axis=-1, keepdims=True)
    # A row with every key blocked has max -inf; shift it by 0 instead, so no inf - inf = NaN.
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)
    e = np.exp(scores - row_max)  # softmax is unchanged by the shift, and nothing overflows
    total = e.sum(axis=-1, keepdims=True)
    # That row sums to 0: divide by 1 instead, leaving its zeros as they are.
    return e / np.where(total == 0.0, 1.0, total)
