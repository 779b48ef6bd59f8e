"""Reference solution: grouped-query attention (PyTorch)."""

import torch
from torch import nn

from aiayn.pt.attention import merge_heads, scaled_dot_product_attention, split_heads


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    # Key/value head g serves the query heads g * group .. g * group + group - 1.
    return x.repeat_interleave(group, dim=1)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        d_k = d_model // num_heads
        self.w_q = nn.Linear(d_model, num_heads * d_k)
        self.w_k = nn.Linear(d_model, num_kv_heads * d_k)  # G heads: what a cache keeps
        self.w_v = nn.Linear(d_model, num_kv_heads * d_k)
        self.w_o = nn.Linear(num_heads * d_k, d_model)

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.w_q(query), self.num_heads)     # (B, H, T_q, d_k)
        k = split_heads(self.w_k(key), self.num_kv_heads)    # (B, G, T_k, d_k)
        v = split_heads(self.w_v(value), self.num_kv_heads)
        group = self.num_heads // self.num_kv_heads
        out, weights = scaled_dot_product_attention(q, repeat_kv(k, group), repeat_kv(v, group),
                                                    mask)
        return self.w_o(merge_heads(out)), weights
