"""Fills masked scores with -1e9: fine while a query keeps one key, but a query whose keys are
all masked then attends uniformly to all of them instead of to nothing.

exercise: scaled_dot_product_attention/sdpa_torch
caught by: a query with every key masked: zero weights, zero output, no NaN
message mentions: zero weights; -1e9
breaks: scaled_dot_product_attention: all-masked
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)  # the mistake: no zeroing afterwards
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
