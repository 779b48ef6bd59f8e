"""Reference solution: scaled dot-product attention in PyTorch."""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T_q, T_k)
    if mask is not None:
        # The most negative finite number rather than -inf: an all-masked row then has a
        # finite softmax (uniform) instead of 0/0 = NaN, in the forward and backward pass ...
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # ... and this zeroes that row.
    return weights @ v, weights
