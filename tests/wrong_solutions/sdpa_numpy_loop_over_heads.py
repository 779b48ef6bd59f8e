"""Right numbers, one head at a time: a Python loop over the batch and the heads.

exercise: scaled_dot_product_attention/sdpa_numpy
caught by: no loop over heads or sentences: (B, H) = (2, 2) and (3, 5) run as many lines
message mentions: loop over the heads
breaks: scaled_dot_product_attention: no-head-loop
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    B, H, T_q, _ = q.shape
    full = np.ones((B, H, T_q, k.shape[2]), bool) if mask is None else \
        np.broadcast_to(mask, (B, H, T_q, k.shape[2]))
    output = np.zeros((B, H, T_q, v.shape[-1]))
    weights = np.zeros((B, H, T_q, k.shape[2]))
    for b in range(B):  # the mistake: one head of one sentence per turn
        for h in range(H):
            scores = np.where(full[b, h], q[b, h] @ k[b, h].T / np.sqrt(q.shape[-1]), -np.inf)
            top = scores.max(axis=-1, keepdims=True)
            e = np.exp(scores - np.where(np.isneginf(top), 0.0, top))
            total = e.sum(axis=-1, keepdims=True)
            weights[b, h] = e / np.where(total == 0.0, 1.0, total)
            output[b, h] = weights[b, h] @ v[b, h]
    return output, weights
