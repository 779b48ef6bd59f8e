"""Reads the mask the other way round (True = blocked, as in nn.MultiheadAttention).

exercise: scaled_dot_product_attention/sdpa_torch
caught by: masked keys get exactly zero weight (True = may attend)
message mentions: mask is inverted; True means
breaks: scaled_dot_product_attention: mask
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        mask = ~mask  # the mistake: the course's masks say True = may attend
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
