"""A fix that calls .contiguous() on the wrong side of the transpose: the tensor .view sees is
still strided.

exercise: common_mistakes/merge_heads
caught by: undoes split_heads, and merges the output of attention, weights @ V
message mentions: .contiguous().view
breaks: merge_heads: any-input
"""

import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, H, T, d_k = x.shape
    return x.contiguous().transpose(1, 2).view(B, T, H * d_k)  # the mistake: contiguous too early
