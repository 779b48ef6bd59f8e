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
    return _lower_triangular(size, device=None)


def target_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Decoder self-attention: not padding AND not in the future, ``(B, 1, T, T)``."""
    check_rank("tokens", tokens, 2, "(B, T) token ids")
    # Made on the tokens' device: a mask made on the CPU and copied to a GPU would be a copy per
    # forward pass, and one that stops the host until the GPU has finished the work queued before it.
    return padding_mask(tokens, pad_id) & _lower_triangular(tokens.shape[1], device=tokens.device)


def _lower_triangular(size: int, device) -> torch.Tensor:
    check_positive("size", size)
    return torch.ones(size, size, dtype=torch.bool, device=device).tril()[None, None]
