"""Attention over blocks of keys with an online softmax, PyTorch: the paper's outputs, without ever
holding the (T_q, T_k) score matrix.

softmax(Q K^T / sqrt(d_k)) V needs, for each query, the sum of exp(score) over *all* keys before
it can weight a single value. The online softmax (Milakov & Gimelshein, 2018) keeps three running
quantities per query instead, updated one block of keys at a time:

    m    the largest score seen so far,
    l    the sum of exp(score - m) over the keys seen so far,
    acc  the sum of exp(score - m) * value over the same keys.

When a block raises the maximum from m to m', the earlier sums are rescaled by exp(m - m'); after
the last block, acc / l is exactly softmax(scores) V. Memory for scores: T_q x block instead of
T_q x T_k. Rabe & Staats (2021) and FlashAttention (Dao et al., 2022) are built on this; the
fused kernels of ``F.scaled_dot_product_attention`` are its optimised form (the tests compare).
Autograd differentiates it as written, keeping every block for the backward pass: the memory
saving is the forward pass's (FlashAttention recomputes the blocks in its backward pass instead).
"""

import math

import torch

from .._checks import check_mask, check_positive, check_qkv


def chunked_attention(q, k, v, mask=None, key_block: int = 64):
    """softmax(Q K^T / sqrt(d_k)) V, computed over blocks of ``key_block`` keys.

    q: (B, H, T_q, d_k), k: (B, H, T_k, d_k), v: (B, H, T_k, d_v), mask: bool, broadcastable to
    (B, H, T_q, T_k), True = may attend. Returns the output (B, H, T_q, d_v) only: the weights are
    never formed. A query whose keys are all masked gets zeros, as in the paper's function."""
    target = check_qkv(q, k, v)
    check_positive("key_block", key_block)
    if mask is not None:
        check_mask(mask, getattr(mask, "dtype", None) == torch.bool, target)
    scale = 1.0 / math.sqrt(q.shape[-1])
    m = q.new_full(q.shape[:-1] + (1,), float("-inf"))   # running maximum score per query
    l = q.new_zeros(q.shape[:-1] + (1,))                 # running sum of exp(score - m)
    acc = q.new_zeros(q.shape[:-1] + (v.shape[-1],))     # running sum of exp(score - m) * value
    for start in range(0, k.shape[2], key_block):
        keys = slice(start, start + key_block)
        scores = (q * scale) @ k[:, :, keys].transpose(-1, -2)         # (B, H, T_q, block)
        if mask is not None:
            scores = scores.masked_fill(~mask[..., keys], float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isneginf(m_new), 0.0, m_new)  # all masked so far: keep it finite
        p = torch.exp(scores - shift)                             # masked keys: exp(-inf) = 0
        rescale = torch.exp(m - shift)                            # the earlier blocks' terms, re-based
        l = l * rescale + p.sum(dim=-1, keepdim=True)
        acc = acc * rescale + p @ v[:, :, keys]
        m = m_new
    return acc / torch.where(l == 0.0, 1.0, l)
