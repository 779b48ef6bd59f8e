"""Exercise: the backward pass of scaled dot-product attention, in NumPy.

Check your work:  python -m aiayn.grading backpropagation/attention_backward
"""

import numpy as np


def attention_backward(grad_out: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray,
                       weights: np.ndarray) -> tuple:
    """Gradients of out = P V, P = masked_softmax(S), S = Q K^T / sqrt(d_k), given dL/d(out).

    grad_out: (B, H, T_q, d_v); q: (B, H, T_q, d_k); k: (B, H, T_k, d_k); v: (B, H, T_k, d_v);
    weights: P, (B, H, T_q, T_k), as the forward pass returned it (blocked keys have weight 0,
    and a query whose keys are all blocked has a row of zeros). T_q and T_k may differ, and so
    may d_k and d_v. Work in this order: dV and dP from out = P V; dS from dP (the softmax's
    backward: see softmax_backward); dQ and dK from S = Q K^T / sqrt(d_k).

    Promises (the grader checks each one):
      - shapes: returns (grad_q, grad_k, grad_v), in this order, shaped like q, k and v.
      - grad-v: grad_v = P^T dL/d(out).
      - grad-q: grad_q = dS K / sqrt(d_k), dS the softmax's backward of dP = dL/d(out) V^T.
      - grad-k: grad_k = dS^T Q / sqrt(d_k).
      - masked: keys with weight 0 get no gradient, and a query whose keys are all blocked
        gets zeros, not NaN.
    """
    raise NotImplementedError
