"""Exercise: scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V (§3.2.1), in NumPy.

Check your work:  python -m aiayn.grading scaled_dot_product_attention/sdpa_numpy
"""

import numpy as np


def scaled_dot_product_attention(q, k, v, mask=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, for a batch of heads at once.

    q:    (B, H, T_q, d_k)   queries
    k:    (B, H, T_k, d_k)   keys
    v:    (B, H, T_k, d_v)   values (d_v may differ from d_k)
    mask: None, or boolean, broadcastable to (B, H, T_q, T_k); True = "may attend".
          A padding mask is (B, 1, 1, T_k), a causal mask (1, 1, T_q, T_k).
    Write the softmax as in the masked_softmax exercise.

    Promises (the grader checks each one):
      - shapes: returns a pair (output, weights) of NumPy arrays, output (B, H, T_q, d_v) and
        weights (B, H, T_q, T_k).
      - softmax: each query's weights sum to 1 over the keys it may attend to (a softmax over
        the last axis).
      - scale: the scores are Q K^T / sqrt(d_k).
      - output: output = weights @ V.
      - mask: masked keys get exactly zero weight (True = may attend), for every mask that
        broadcasts: padding, causal, or both.
      - all-masked: a query whose keys are all masked gets zero weights and a zero output
        (no NaN).
      - no-head-loop: all heads at once: no Python loop over the heads (or the batch).
      - own-softmax: the softmax is written here, not taken from the course (aiayn).
    """
    raise NotImplementedError
