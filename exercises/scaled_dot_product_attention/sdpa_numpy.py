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
    Returns (output, weights):
      output  (B, H, T_q, d_v)
      weights (B, H, T_q, T_k), each query's row summing to 1 over the keys it may attend to;
              a query whose keys are all masked gets zero weights and a zero output (no NaN).
    Write the softmax yourself (as in the masked_softmax exercise); no loop over heads.
    """
    raise NotImplementedError
