"""Takes the softmax over the queries (dim=-2) instead of the keys (dim=-1).

exercise: scaled_dot_product_attention/sdpa_torch
caught by: each query's weights sum to 1 over the keys (softmax over the last axis)
message mentions: LAST axis
breaks: scaled_dot_product_attention: softmax
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)  # the mistake: dim=-2, the queries
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
