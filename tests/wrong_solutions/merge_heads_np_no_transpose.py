"""Merges by reshaping (B, H, T, d_k) straight to (B, T, H * d_k), without moving the heads axis.

exercise: multi_head_attention/split_merge_heads
caught by: merge_heads: (B, H, T, d_k) -> (B, T, H * d_k), equal to the course's
message mentions: Transpose to (B, T, H, d_k) first
breaks: merge_heads: value
"""

import numpy as np


def split_heads(x, num_heads):
    B, T, d_model = x.shape
    return x.reshape(B, T, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d_k = x.shape
    return x.reshape(B, T, H * d_k)  # the mistake: no transpose back
