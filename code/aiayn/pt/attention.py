"""Scaled dot-product attention (§3.2.1) and multi-head attention (§3.2.2), PyTorch."""

import math

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import SDPBackend, sdpa_kernel

from .._checks import check_heads, check_mask, check_mha_inputs, check_qkv, check_rank, head_sizes


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last axis that gives masked keys exactly zero weight.

    A row whose keys are *all* masked gets all-zero weights instead of NaN (0/0), which matches
    what ``F.scaled_dot_product_attention`` returns for such rows.

    Why ``torch.softmax`` and a fix-up rather than the formula spelled out (subtract the row
    maximum, exponentiate, divide by the sum, as the NumPy twin does): each of those steps is a
    separate pass over the (B, H, T_q, T_k) scores, forwards and backwards, and they made this
    module 1.7x slower than ``nn.MultiheadAttention`` on a CPU; ``torch.softmax`` does the same
    arithmetic (it subtracts the maximum too) in one pass. An all-masked row comes out of it as
    NaN; ``masked_fill`` replaces the row (values *and* gradients) by zeros.
    """
    if mask is None:
        return torch.softmax(scores, dim=-1)
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V.

    q: (B, H, T_q, d_k), k: (B, H, T_k, d_k), v: (B, H, T_k, d_v),
    mask: bool, broadcastable to (B, H, T_q, T_k), True = may attend.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)).
    """
    target = check_qkv(q, k, v)
    if mask is not None:
        check_mask(mask, getattr(mask, "dtype", None) == torch.bool, target)
    # (q / sqrt(d_k)) K^T = Q K^T / sqrt(d_k): scaling q costs T_q * d_k divisions, the
    # scores would cost T_q * T_k (F.scaled_dot_product_attention scales q too).
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-1, -2)
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


# Every fused kernel but cuDNN's. PyTorch tries cuDNN's attention first on Hopper (sm90 with
# cuDNN >= 9.15), and it builds an execution plan for each new (batch, query length, key length),
# hundreds of milliseconds each. Length-sorted token batches bring a new shape at almost every
# update of the first epoch, beam search one at every decoding step: on an H100 the first 100
# updates of multi30k-small took 29.8 s, 100 later ones 4.6 s (results/gpu/STATUS.md). Flash and
# memory-efficient attention need no plan. With cuDNN left out (and two other changes in between,
# not measured apart) the training chapter's 8,000 updates took 332 s on an H100 instead of 480.
PLANLESS_BACKENDS = [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]


def _fused_attention(q, k, v, mask=None):
    """``F.scaled_dot_product_attention`` with a boolean mask (True = may attend), never by
    cuDNN's kernel on a GPU (above); on a CPU PyTorch's own choice, which never is cuDNN."""
    if not q.is_cuda:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    with sdpa_kernel(PLANLESS_BACKENDS):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, all heads in one batched matmul.

    Each head has ``d_k`` query/key and ``d_v`` value features; the paper's d_k = d_v = d_model / h
    is the default, and Table 3 (row B) also tries narrower keys, e.g. ``d_k=16`` with h = 8.


    ``fused = True`` swaps our explicit attention for ``F.scaled_dot_product_attention``, the same
    function (the tests check equality) computed by a fused kernel (FlashAttention and friends on
    GPU) that never materialises the weights: ``forward`` then returns ``None`` for them.
    """

    fused: bool = False

    def __init__(self, d_model: int, num_heads: int, d_k: int | None = None, d_v: int | None = None):
        super().__init__()
        d_k, d_v = head_sizes(d_model, num_heads, d_k, d_v)
        self.d_model, self.num_heads = d_model, num_heads
        self.w_q = nn.Linear(d_model, num_heads * d_k)  # the h matrices W_i^Q side by side
        self.w_k = nn.Linear(d_model, num_heads * d_k)
        self.w_v = nn.Linear(d_model, num_heads * d_v)
        self.w_o = nn.Linear(num_heads * d_v, d_model)

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key/value (B, T_k, d_model) -> (out, weights (B, H, T_q, T_k))."""
        check_mha_inputs(query, key, value, self.d_model)
        q = split_heads(self.w_q(query), self.num_heads)
        k = split_heads(self.w_k(key), self.num_heads)
        v = split_heads(self.w_v(value), self.num_heads)
        if self.fused:
            if mask is not None:
                check_mask(mask, mask.dtype == torch.bool, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
            out, weights = _fused_attention(q, k, v, mask), None
        else:
            out, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.w_o(merge_heads(out)), weights
