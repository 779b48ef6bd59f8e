"""Scaled dot-product attention (§3.2.1) and multi-head attention (§3.2.2), NumPy."""

import math

import numpy as np

from .._checks import check_heads, check_mask, check_mha_inputs, check_qkv, check_rank, head_sizes
from .backprop import scaled_dot_product_attention_backward
from .nn import Linear, Module


def masked_softmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Softmax over the last axis that gives masked keys exactly zero weight.

    A row whose keys are *all* masked gets all-zero weights instead of NaN (0/0): we subtract
    a finite row maximum and divide by a sum that is never zero. This matches what
    ``F.scaled_dot_product_attention`` returns for such rows.
    """
    if mask is not None:
        scores = np.where(mask, scores, -np.inf)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), 0.0, row_max)  # all-masked row: keep it finite
    e = np.exp(scores - row_max)  # exp(-inf) = 0 for masked keys
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0.0, 1.0, total)


def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V.

    q: (B, H, T_q, d_k), k: (B, H, T_k, d_k), v: (B, H, T_k, d_v),
    mask: bool, broadcastable to (B, H, T_q, T_k), True = may attend.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)).
    """
    target = check_qkv(q, k, v)
    if mask is not None:
        check_mask(mask, getattr(mask, "dtype", None) == np.bool_, target)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    weights = masked_softmax(scores, mask)
    return weights @ v, weights


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, d_model) -> (B, H, T, d_k), copied into contiguous memory (one layout for every
    back end; the multi-head chapter measures that strided views are as fast with NumPy 2.4)."""
    check_rank("x", x, 3, "(B, T, d_model)")
    B, T, D = x.shape
    check_heads(D, num_heads)
    return np.ascontiguousarray(x.reshape(B, T, num_heads, D // num_heads).transpose(0, 2, 1, 3))


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of ``split_heads``."""
    check_rank("x", x, 4, "(B, H, T, d_k)")
    B, H, T, d_k = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d_k)


class MultiHeadAttention(Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, all heads in one batched matmul.

    Each head has ``d_k`` query/key and ``d_v`` value features; the paper's d_k = d_v = d_model / h
    is the default, and Table 3 (row B) also tries narrower keys, e.g. ``d_k=16`` with h = 8."""

    def __init__(self, d_model: int, num_heads: int, d_k: int | None = None, d_v: int | None = None):
        d_k, d_v = head_sizes(d_model, num_heads, d_k, d_v)
        self.d_model, self.num_heads = d_model, num_heads
        self.w_q = Linear(d_model, num_heads * d_k)  # the h matrices W_i^Q side by side
        self.w_k = Linear(d_model, num_heads * d_k)
        self.w_v = Linear(d_model, num_heads * d_v)
        self.w_o = Linear(num_heads * d_v, d_model)

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key/value (B, T_k, d_model) -> (out, weights (B, H, T_q, T_k))."""
        check_mha_inputs(query, key, value, self.d_model)
        q = split_heads(self.w_q(query), self.num_heads)
        k = split_heads(self.w_k(key), self.num_heads)
        v = split_heads(self.w_v(value), self.num_heads)
        out, weights = scaled_dot_product_attention(q, k, v, mask)
        self.save_for_backward(q, k, v, weights)  # masked keys have weight 0: the mask is in them
        return self.w_o(merge_heads(out)), weights

    def backward(self, grad):
        """dL/d(output) (B, T_q, d_model) -> (dL/dquery, dL/dkey, dL/dvalue), the forward pass
        in reverse. ``merge_heads`` only moves numbers, so its backward moves the gradient back
        with ``split_heads``, and the other way round. Self-attention passes one array as query,
        key and value: its gradient is the sum of the three."""
        q, k, v, weights = self.saved()
        grad_out = split_heads(self.w_o.backward(grad), self.num_heads)
        grad_q, grad_k, grad_v = scaled_dot_product_attention_backward(grad_out, q, k, v, weights)
        return (self.w_q.backward(merge_heads(grad_q)), self.w_k.backward(merge_heads(grad_k)),
                self.w_v.backward(merge_heads(grad_v)))
