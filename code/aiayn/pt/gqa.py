"""Grouped-query attention (Ainslie et al., 2023), PyTorch: fewer key/value heads than query heads.

The paper's multi-head attention gives each of its h heads its own keys and values. While a
decoder generates, those keys and values are what its cache holds, 2 x h x d_k numbers per token
and layer (the fast-decoding chapter). Multi-query attention (Shazeer, 2019) keeps one key/value
head that all query heads read; grouped-query attention keeps ``num_kv_heads`` of them, each
read by a group of h / num_kv_heads query heads (query head i reads key/value head
i // (h / num_kv_heads), as ``F.scaled_dot_product_attention(..., enable_gqa=True)`` does). The
cache shrinks by h / num_kv_heads; the query projection and the output stay as they were.

``GroupedQueryAttention`` also carries the two other later choices that act inside attention:
``rotary`` (``aiayn.pt.rotary``: queries and keys rotated by their positions) and ``key_block``
(``aiayn.pt.chunked``: an online softmax over blocks of keys). ``aiayn.pt.variants`` builds it.
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.attention import sdpa_kernel

from .._checks import check_mask, check_mha_inputs, check_positive, head_sizes
from .attention import PLANLESS_BACKENDS, MultiHeadAttention, merge_heads, scaled_dot_product_attention, split_heads
from .chunked import chunked_attention
from .rotary import rotate


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(B, G, T, d) -> (B, G * group, T, d): key/value head g serves query heads g*group .. g*group + group - 1."""
    return x if group == 1 else x.repeat_interleave(group, dim=1)


class GroupedQueryAttention(MultiHeadAttention):
    """Multi-head attention with ``num_kv_heads`` key/value heads (``None``: one per query head,
    the paper's), optionally rotary positions and attention over blocks of keys.
    The weights keep the paper's names: ``w_k`` and ``w_v`` map d_model to num_kv_heads heads.
    ``fused = True`` (the Trainer sets it on a GPU) computes attention with
    ``F.scaled_dot_product_attention(..., enable_gqa=True)``, which reads the shared heads in place."""

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int | None = None, d_k: int | None = None,
                 d_v: int | None = None, rotary: bool = False, key_block: int | None = None):
        nn.Module.__init__(self)  # the layers below, not the paper's four of equal width
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
        self.w_q = nn.Linear(d_model, num_heads * d_k)
        self.w_k = nn.Linear(d_model, num_kv_heads * d_k)  # fewer heads: narrower projections
        self.w_v = nn.Linear(d_model, num_kv_heads * d_v)
        self.w_o = nn.Linear(num_heads * d_v, d_model)

    def queries(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(B, T, d_model) at positions start, start + 1, ... -> (B, H, T, d_k)."""
        q = split_heads(self.w_q(x), self.num_heads)
        return rotate(q, start) if self.rotary else q

    def keys(self, x: torch.Tensor, start: int = 0) -> torch.Tensor:
        """(B, T, d_model) at positions start, start + 1, ... -> (B, G, T, d_k): what a cache keeps."""
        k = split_heads(self.w_k(x), self.num_kv_heads)
        return rotate(k, start) if self.rotary else k

    def values(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, G, T, d_v): what a cache keeps."""
        return split_heads(self.w_v(x), self.num_kv_heads)

    def attend(self, q, k, v, mask=None):
        """q (B, H, T_q, d_k), k (B, G, T_k, d_k), v (B, G, T_k, d_v) -> (out (B, H, T_q, d_v),
        weights (B, H, T_q, T_k), or None where they are never formed: fused, or over blocks of keys)."""
        if self.fused:
            if mask is not None:
                check_mask(mask, mask.dtype == torch.bool, (q.shape[0], q.shape[1], q.shape[2], k.shape[2]))
            gqa = self.num_kv_heads != self.num_heads
            if not q.is_cuda:
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa), None
            with sdpa_kernel(PLANLESS_BACKENDS):
                return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa), None
        group = self.num_heads // self.num_kv_heads
        k, v = repeat_kv(k, group), repeat_kv(v, group)
        if self.key_block is not None:
            return chunked_attention(q, k, v, mask, self.key_block), None
        return scaled_dot_product_attention(q, k, v, mask)

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key/value (B, T_k, d_model) -> (out, weights or None); the
        queries stand at positions 0 .. T_q - 1 and the keys at 0 .. T_k - 1."""
        check_mha_inputs(query, key, value, self.d_model)
        out, weights = self.attend(self.queries(query), self.keys(key), self.values(value), mask)
        return self.w_o(merge_heads(out)), weights
