"""Scaled dot-product attention (§3.2.1) and multi-head attention (§3.2.2), PyTorch."""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_heads, check_mask, check_mha_inputs, check_qkv, check_rank


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis that gives masked keys exactly zero weight.

    A row whose keys are *all* masked gets all-zero weights instead of NaN (0/0): we subtract
    a finite row maximum and divide by a sum that is never zero. This matches what
    ``F.scaled_dot_product_attention`` returns for such rows.
    """
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    row_max = scores.amax(dim=-1, keepdim=True).detach()  # a shift; softmax is invariant to it
    row_max = torch.where(torch.isneginf(row_max), 0.0, row_max)  # all-masked row: keep it finite
    e = torch.exp(scores - row_max)  # exp(-inf) = 0 for masked keys
    total = e.sum(dim=-1, keepdim=True)
    return e / torch.where(total == 0.0, 1.0, total)


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V.

    q: (B, H, T_q, d_k), k: (B, H, T_k, d_k), v: (B, H, T_k, d_v),
    mask: bool, broadcastable to (B, H, T_q, T_k), True = may attend.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)).
    """
    target = check_qkv(q, k, v)
    if mask is not None:
        check_mask(mask, getattr(mask, "dtype", None) == torch.bool, target)
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, d_model) -> (B, H, T, d_k). A view: the transpose moves no data."""
    check_rank("x", x, 3, "(B, T, d_model)")
    B, T, D = x.shape
    check_heads(D, num_heads)
    return x.view(B, T, num_heads, D // num_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of ``split_heads``.

    After the transpose the memory is no longer in (B, T, H, d_k) order, so ``.view`` would
    fail; ``.reshape`` copies when it must (``.contiguous().view`` says the same thing)."""
    check_rank("x", x, 4, "(B, H, T, d_k)")
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, all heads in one batched matmul.

    ``fused = True`` swaps our explicit attention for ``F.scaled_dot_product_attention``, the same
    function (the tests check equality) computed by a fused kernel (FlashAttention and friends on
    GPU) that never materialises the weights: ``forward`` then returns ``None`` for them.
    """

    fused: bool = False

    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        check_heads(d_model, num_heads)
        self.d_model, self.num_heads = d_model, num_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key/value (B, T_k, d_model) -> (out, weights (B, H, T_q, T_k))."""
        check_mha_inputs(query, key, value, self.d_model)
        q = split_heads(self.w_q(query), self.num_heads)
        k = split_heads(self.w_k(key), self.num_heads)
        v = split_heads(self.w_v(value), self.num_heads)
        if self.fused:
            if mask is not None:
                check_mask(mask, mask.dtype == torch.bool, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
            out, weights = F.scaled_dot_product_attention(q, k, v, attn_mask=mask), None
        else:
            out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.w_o(merge_heads(out)), weights
