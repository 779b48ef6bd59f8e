"""Reference solution: the decoder's target mask (NumPy)."""

import numpy as np


def target_mask(tokens: np.ndarray, pad_id: int) -> np.ndarray:
    T = tokens.shape[1]
    keys_ok = (tokens != pad_id)[:, None, None, :]           # (B, 1, 1, T): not padding
    past_ok = np.tril(np.ones((T, T), dtype=bool))[None, None]  # (1, 1, T, T): j <= i
    return keys_ok & past_ok  # both conditions: broadcasts to (B, 1, T, T)
