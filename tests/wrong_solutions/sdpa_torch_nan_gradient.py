"""Masks by adding -inf (an additive mask) and zeroes the masked weights afterwards: the
forward pass is right (an all-masked query gets zeros), but its softmax made NaN, and the
addition passes that NaN back to the scores, NaN * 0 being NaN.

exercise: scaled_dot_product_attention/sdpa_torch
caught by: gradients equal aiayn.pt's and stay finite with an all-masked row
message mentions: NaN * 0 is still NaN
breaks: scaled_dot_product_attention: gradients
"""

import math

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:  # the mistake: an additive -inf mask lets NaN flow back to the scores
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)  # hides the NaN going forward only
    return weights @ v, weights
