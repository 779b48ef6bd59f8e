"""Masks under the course's one convention: boolean, 4-D, ``True`` = "this query may attend
to this key", broadcastable to the attention scores ``(B, H, T_q, T_k)``."""

import torch

from .._checks import check_positive, check_rank


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """``(B, T)`` ids -> ``(B, 1, 1, T)``: every query may look at every non-padding key."""
    check_rank("tokens", tokens, 2, "(B, T) token ids")
    return (tokens != pad_id)[:, None, None, :]


def causal_mask(size: int) -> torch.Tensor:
    """``(1, 1, T, T)``, lower triangular: position i sees positions 0..i, never the future."""
    check_positive("size", size)
    return torch.tril(torch.ones(size, size, dtype=torch.bool))[None, None]


def target_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Decoder self-attention: not padding AND not in the future, ``(B, 1, T, T)``."""
    check_rank("tokens", tokens, 2, "(B, T) token ids")
    return padding_mask(tokens, pad_id) & causal_mask(tokens.shape[1]).to(tokens.device)
