"""Grouped-query attention (Ainslie et al., 2023), NumPy: fewer key/value heads than query heads.

The paper's multi-head attention gives each of its h heads its own keys and values. While a
decoder generates, those keys and values are what its cache holds, 2 x h x d_k numbers per token
and layer (the fast-decoding chapter). Multi-query attention (Shazeer, 2019) keeps one key/value
head that all query heads read; grouped-query attention keeps ``num_kv_heads`` of them, each
read by a group of h / num_kv_heads query heads (query head i reads key/value head
i // (h / num_kv_heads), as ``F.scaled_dot_product_attention(..., enable_gqa=True)`` does). The
cache shrinks by h / num_kv_heads; the query projection and the output stay as they were.

``GroupedQueryAttention`` also carries the two other later choices that act inside attention:
``rotary`` (``aiayn.np.rotary``: queries and keys rotated by their positions) and ``key_block``
(``aiayn.np.chunked``: an online softmax over blocks of keys). ``aiayn.np.variants`` builds it.
"""

import numpy as np

from .._checks import check_mha_inputs, check_positive, head_sizes
from .attention import MultiHeadAttention, masked_softmax, merge_heads, scaled_dot_product_attention, split_heads
from .backprop import scaled_dot_product_attention_backward
from .chunked import chunked_attention
from .nn import Linear
from .rotary import rotate


def repeat_kv(x: np.ndarray, group: int) -> np.ndarray:
    """(B, G, T, d) -> (B, G * group, T, d): key/value head g serves query heads g*group .. g*group + group - 1."""
    return x if group == 1 else np.repeat(x, group, axis=1)


class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention with ``num_kv_heads`` key/value heads (``None``: one per query head,
    the paper's), optionally rotary positions and attention over blocks of keys.
    The weights keep the paper's names: ``w_k`` and ``w_v`` map d_model to num_kv_heads heads."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int | None = None, d_k: int | None = None,
                 d_v: int | None = None, rotary: bool = False, key_block: int | None = None):
        d_k, d_v = head_sizes(d_model, num_heads, d_k, d_v)
        num_kv_heads = num_heads if num_kv_heads is None else num_kv_heads
        check_positive("num_kv_heads", num_kv_heads)
        if num_heads % num_kv_heads:
            raise ValueError(f"num_kv_heads={num_kv_heads} must divide num_heads={num_heads}")
        if rotary and d_k % 2:
            raise ValueError(f"rotary positions rotate pairs of features: d_k={d_k} must be even")
        if key_block is not None:
            check_positive("key_block", key_block)
        self.d_model, self.num_heads, self.num_kv_heads = d_model, num_heads, num_kv_heads
        self.rotary, self.key_block = rotary, key_block
        self.w_q = Linear(d_model, num_heads * d_k)
        self.w_k = Linear(d_model, num_kv_heads * d_k)  # fewer heads: narrower projections
        self.w_v = Linear(d_model, num_kv_heads * d_v)
        self.w_o = Linear(num_heads * d_v, d_model)

    def queries(self, x: np.ndarray, start: int = 0) -> np.ndarray:
        """(B, T, d_model) at positions start, start + 1, ... -> (B, H, T, d_k)."""
        q = split_heads(self.w_q(x), self.num_heads)
        return rotate(q, start) if self.rotary else q

    def keys(self, x: np.ndarray, start: int = 0) -> np.ndarray:
        """(B, T, d_model) at positions start, start + 1, ... -> (B, G, T, d_k): what a cache keeps."""
        k = split_heads(self.w_k(x), self.num_kv_heads)
        return rotate(k, start) if self.rotary else k

    def values(self, x: np.ndarray) -> np.ndarray:
        """(B, T, d_model) -> (B, G, T, d_v): what a cache keeps."""
        return split_heads(self.w_v(x), self.num_kv_heads)

    def attend(self, q, k, v, mask=None):
        """q (B, H, T_q, d_k), k (B, G, T_k, d_k), v (B, G, T_k, d_v) -> (out (B, H, T_q, d_v),
        weights (B, H, T_q, T_k), or None over blocks of keys, which never forms them)."""
        group = self.num_heads // self.num_kv_heads
        k, v = repeat_kv(k, group), repeat_kv(v, group)
        if self.key_block is not None:
            return chunked_attention(q, k, v, mask, self.key_block), None
        return scaled_dot_product_attention(q, k, v, mask)

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key/value (B, T_k, d_model) -> (out, weights or None); the
        queries stand at positions 0 .. T_q - 1 and the keys at 0 .. T_k - 1."""
        check_mha_inputs(query, key, value, self.d_model)
        q, k, v = self.queries(query), self.keys(key), self.values(value)
        out, weights = self.attend(q, k, v, mask)
        self.save_for_backward(q, k, v, weights, mask)
        return self.w_o(merge_heads(out)), weights

    def backward(self, grad):
        """dL/d(output) -> (dL/dquery, dL/dkey, dL/dvalue). A shared key/value head received
        gradient from every query head of its group: the sum. A rotation's transpose is the
        rotation back. Over blocks of keys the weights are recomputed here in full."""
        q, k, v, weights, mask = self.saved()
        group = self.num_heads // self.num_kv_heads
        k_all, v_all = repeat_kv(k, group), repeat_kv(v, group)
        if weights is None:
            weights = masked_softmax(q @ np.swapaxes(k_all, -1, -2) / np.sqrt(q.shape[-1]), mask)
        grad_out = split_heads(self.w_o.backward(grad), self.num_heads)
        grad_q, grad_k, grad_v = scaled_dot_product_attention_backward(grad_out, q, k_all, v_all, weights)
        B, _, T_k, _ = k.shape
        grad_k = grad_k.reshape(B, self.num_kv_heads, group, T_k, -1).sum(axis=2)
        grad_v = grad_v.reshape(B, self.num_kv_heads, group, T_k, -1).sum(axis=2)
        if self.rotary:
            grad_q, grad_k = rotate(grad_q, inverse=True), rotate(grad_k, inverse=True)
        return (self.w_q.backward(merge_heads(grad_q)), self.w_k.backward(merge_heads(grad_k)),
                self.w_v.backward(merge_heads(grad_v)))
