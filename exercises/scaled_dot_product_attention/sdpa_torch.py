"""Exercise: scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V (§3.2.1), in PyTorch.

Check your work:  python -m aiayn.grading scaled_dot_product_attention/sdpa_torch
"""

import torch


def scaled_dot_product_attention(q, k, v, mask=None):
    """Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, for a batch of heads at once.

    q:    (B, H, T_q, d_k)   queries
    k:    (B, H, T_k, d_k)   keys
    v:    (B, H, T_k, d_v)   values (d_v may differ from d_k)
    mask: None, or a bool tensor broadcastable to (B, H, T_q, T_k); True = "may attend"
          (the meaning of attn_mask in F.scaled_dot_product_attention, the opposite of
          nn.MultiheadAttention's masks).
    Returns (output, weights):
      output  (B, H, T_q, d_v)
      weights (B, H, T_q, T_k), each query's row summing to 1 over the keys it may attend to;
              a query whose keys are all masked gets zero weights and a zero output, and
              gradients stay finite (no NaN anywhere, forward or backward).
    Keep the input's dtype and device. Do not call F.scaled_dot_product_attention: it returns
    no weights, and writing the computation is the point.
    """
    raise NotImplementedError
