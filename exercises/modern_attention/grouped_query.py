"""Exercise: grouped-query attention (Ainslie et al., 2023), in PyTorch.

The paper's multi-head attention gives each of its h heads its own keys and values, and a
decoder's cache holds all of them. Grouped-query attention computes G = num_kv_heads key/value
heads, each read by a group of h / G query heads. With G = h it is the paper's multi-head
attention; with G = 1 it is multi-query attention (Shazeer, 2019).

The paper's parts may be imported: split_heads, merge_heads and scaled_dot_product_attention
from aiayn.pt.attention (the course's, or yours from the earlier chapters).

Check your work:  python -m aiayn.grading modern_attention/grouped_query
"""

import torch
from torch import nn


def repeat_kv(x: torch.Tensor, group: int) -> torch.Tensor:
    """(B, G, T, d) -> (B, G * group, T, d): each key/value head repeated for its group of
    query heads.

    Promises (the grader checks each one):
      - order: head j of the result is head j // group of x: heads 0 .. group - 1 are copies
        of head 0, the next group are copies of head 1, and so on (the order of
        torch.repeat_interleave, not of torch.repeat).
    """
    raise NotImplementedError


class GroupedQueryAttention(nn.Module):
    """Multi-head attention with num_heads query heads and num_kv_heads key/value heads.

    Every head has d_k = d_model // num_heads features; num_kv_heads divides num_heads.

    Promises (the grader checks each one):
      - names: four nn.Linear layers with a bias, named as in the course's MultiHeadAttention:
        w_q and w_o map d_model to d_model, w_k and w_v are described under cache.
      - cache: w_k and w_v map d_model to num_kv_heads * d_k features: the keys and values a
        decoder caches, (B, num_kv_heads, T, d_k) each, are num_heads / num_kv_heads times
        smaller than the paper's.
    """

    def __init__(self, d_model: int, num_heads: int, num_kv_heads: int):
        super().__init__()
        raise NotImplementedError

    def forward(self, query, key, value, mask=None):
        """query (B, T_q, d_model), key and value (B, T_k, d_model) -> (output, weights).

        mask: None, or a bool tensor that broadcasts to (B, num_heads, T_q, T_k).

        Promises (the grader checks each one):
          - shapes: returns a pair, output (B, T_q, d_model) and weights
            (B, num_heads, T_q, T_k): one map per query head.
          - sharing: query head i reads key/value head i // (num_heads / num_kv_heads), as
            F.scaled_dot_product_attention(..., enable_gqa=True) does: equal to the course's
            grouped-query attention with the same weights.
          - ends: with num_kv_heads = num_heads it is the paper's multi-head attention; with
            num_kv_heads = 1 every query head reads the one key/value head (multi-query).
          - mask: True = may attend; a padding mask (B, 1, 1, T_k) and a causal mask
            (1, 1, T, T) reach every query head.
          - all-masked: a query whose keys are all masked gets zero weights, and no NaN
            anywhere.
          - own: the sharing is written here: nothing from the course's grouped-query
            attention (aiayn.pt.gqa, aiayn.np.gqa, aiayn.pt.variants), which your code is
            compared with, and no F.scaled_dot_product_attention (it returns no weights).
        """
        raise NotImplementedError
