"""Multiplies the values by the scaled scores, not by the weights the softmax made of them.

exercise: scaled_dot_product_attention/sdpa_torch
caught by: output is weights @ V
message mentions: multiply the weights by the values
breaks: scaled_dot_product_attention: output
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    masked = scores if mask is None else scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(masked, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return scores @ v, weights  # the mistake: scores @ v, not weights @ v
