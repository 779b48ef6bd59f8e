"""Divides the scores by d_k instead of sqrt(d_k).

exercise: scaled_dot_product_attention/sdpa_torch
caught by: scores are scaled by 1/√d_k
message mentions: divided by d_k; √d_k
breaks: scaled_dot_product_attention: scale
"""

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.size(-1)  # the mistake: d_k, not sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
