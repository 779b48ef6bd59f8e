"""Computes the softmax in float64 "for stability" and never goes back: float32 in, float64
out.

exercise: scaled_dot_product_attention/sdpa_torch
caught by: returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)
message mentions: float32; keep the input's dtype
breaks: scaled_dot_product_attention: dtype
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q @ k.transpose(-2, -1)).double() / math.sqrt(q.size(-1))  # the mistake
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v.double(), weights
