"""The backward passes of the plain functions of ``aiayn.np``, NumPy only.

Modules carry their backward pass as a ``backward`` method (``aiayn.np.nn``); the functions
they call (``masked_softmax``, ``scaled_dot_product_attention``, ``residual``) have theirs
here, each named after its forward function. ``aiayn.pt`` needs none of this: autograd
derives it. Each function takes dL/d(output) and returns dL/d(input) for every input.
"""

import math

import numpy as np


def masked_softmax_backward(grad_weights: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """dL/d(scores) from dL/d(weights), for weights = masked_softmax(scores, mask).

    The softmax Jacobian is dp_i/ds_j = p_i (delta_ij - p_j); multiplied by a vector g it is
        dL/ds_j = p_j (g_j - sum_i g_i p_i),
    one row sum per query instead of a (T_k, T_k) matrix. Masked keys have p_j = 0, so their
    gradient is exactly 0; an all-masked row has p = 0 everywhere and gets zeros, never NaN."""
    return weights * (grad_weights - (grad_weights * weights).sum(axis=-1, keepdims=True))


def scaled_dot_product_attention_backward(grad_out, q, k, v, weights):
    """Gradients of out = P V with P = softmax(S), S = Q K^T / sqrt(d_k), from dL/d(out).

    grad_out (B, H, T_q, d_v), q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v),
    weights P (B, H, T_q, T_k) as the forward pass returned them.
    Returns (dL/dq, dL/dk, dL/dv), shaped like q, k and v."""
    scale = 1.0 / math.sqrt(q.shape[-1])
    grad_v = np.swapaxes(weights, -1, -2) @ grad_out            # out = P V: dV = P^T dO
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)            #            dP = dO V^T
    grad_scores = masked_softmax_backward(grad_weights, weights)  # dS = the softmax's JVP
    grad_q = grad_scores @ k * scale                             # S = Q K^T / sqrt(d_k)
    grad_k = np.swapaxes(grad_scores, -1, -2) @ q * scale
    return grad_q, grad_k, grad_v


def residual_backward(grad, sublayer_backward, norm, dropout, norm_first: bool):
    """The backward of ``aiayn.np.encoder.residual``: dL/d(output) -> dL/dx.

    ``sublayer_backward`` maps dL/d(sub-layer output) to dL/d(sub-layer input). The identity
    path x -> x + ... passes the gradient on unchanged, and it adds to what flows back through
    the sub-layer: under Pre-LN nothing stands in that path, under Post-LN the LayerNorm does."""
    if norm_first:  # y = x + dropout(sublayer(norm(x)))
        return grad + norm.backward(sublayer_backward(dropout.backward(grad)))
    grad = norm.backward(grad)  # y = norm(z), z = x + dropout(sublayer(x))
    return grad + sublayer_backward(dropout.backward(grad))
