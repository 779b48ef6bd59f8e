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

    Promises (the grader checks each one):
      - shapes: returns a pair (output, weights) of tensors, output (B, H, T_q, d_v) and
        weights (B, H, T_q, T_k).
      - dtype: the input's dtype and device are kept (float32 in, float32 out).
      - softmax: each query's weights sum to 1 over the keys it may attend to (a softmax over
        the last axis).
      - scale: the scores are Q K^T / sqrt(d_k).
      - output: output = weights @ V.
      - mask: masked keys get exactly zero weight (True = may attend), for every mask that
        broadcasts: padding, causal, or both.
      - all-masked: a query whose keys are all masked gets zero weights and a zero output
        (no NaN).
      - gradients: gradients reach q, k and v, equal autograd's through this formula, and
        stay finite with an all-masked query (no NaN in the backward pass either).
      - own-attention: the computation is written here: no F.scaled_dot_product_attention
        (it returns no weights, and writing the computation is the point), nothing from the
        course (aiayn).
    """
    raise NotImplementedError
