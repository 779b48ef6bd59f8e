"""A fix that transposes and stops there: (B, T, H, d_k), the heads never merged.

exercise: common_mistakes/merge_heads
caught by: (B, H, T, d_k) -> (B, T, H * d_k), equal to the course's merge_heads
message mentions: (B, T, H * d_k)
breaks: merge_heads: shape
"""

import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    return x.transpose(1, 2).contiguous()  # the mistake: no reshape to (B, T, H * d_k)
