"""Right numbers, but the output comes from F.scaled_dot_product_attention; only the weights,
which it does not return, are computed by hand.

exercise: scaled_dot_product_attention/sdpa_torch
caught by: computes the attention itself: no F.scaled_dot_product_attention, nothing of the course (aiayn)
message mentions: F.scaled_dot_product_attention; write the computation
breaks: scaled_dot_product_attention: own-attention
"""

import math

import torch
import torch.nn.functional as F


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), weights  # the mistake
