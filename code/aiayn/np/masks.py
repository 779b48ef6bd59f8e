"""Masks under the course's one convention: boolean, 4-D, ``True`` = "this query may attend
to this key", broadcastable to the attention scores ``(B, H, T_q, T_k)``."""

import numpy as np

from .._checks import check_positive, check_rank


def padding_mask(tokens: np.ndarray, pad_id: int) -> np.ndarray:
    """``(B, T)`` ids -> ``(B, 1, 1, T)``: every query may look at every non-padding key."""
    check_rank("tokens", tokens, 2, "(B, T) token ids")
    return (tokens != pad_id)[:, None, None, :]


def causal_mask(size: int) -> np.ndarray:
    """``(1, 1, T, T)``, lower triangular: position i sees positions 0..i, never the future."""
    check_positive("size", size)
    return np.tril(np.ones((size, size), dtype=bool))[None, None]


def target_mask(tokens: np.ndarray, pad_id: int) -> np.ndarray:
    """Decoder self-attention: not padding AND not in the future, ``(B, 1, T, T)``."""
    check_rank("tokens", tokens, 2, "(B, T) token ids")
    return padding_mask(tokens, pad_id) & causal_mask(tokens.shape[1])
