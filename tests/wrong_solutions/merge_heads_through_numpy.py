"""A fix done in NumPy: the numbers are right, but the result is a new tensor without a
history, so no gradient reaches the input.

exercise: common_mistakes/merge_heads
caught by: gradients flow through it unchanged (a permutation of the values)
message mentions: stay in PyTorch
breaks: merge_heads: gradients
"""

import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    B, H, T, d_k = x.shape
    merged = x.detach().numpy().transpose(0, 2, 1, 3).reshape(B, T, H * d_k)
    return torch.from_numpy(merged.copy())  # the mistake: the autograd graph is cut
