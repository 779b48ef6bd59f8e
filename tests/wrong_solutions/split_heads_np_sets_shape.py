"""Splits by assigning x.shape, which changes the caller's array; the values are right.

exercise: multi_head_attention/split_merge_heads
caught by: split_heads leaves x unchanged
message mentions: x.shape = ...
breaks: split_heads: input-unchanged
"""

import numpy as np


def split_heads(x, num_heads):
    B, T, d_model = x.shape
    x.shape = (B, T, num_heads, d_model // num_heads)  # the mistake: the caller's x reshaped
    return x.transpose(0, 2, 1, 3)


def merge_heads(x):
    B, H, T, d_k = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d_k)
