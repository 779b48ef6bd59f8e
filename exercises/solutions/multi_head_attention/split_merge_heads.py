"""Reference solution: split and merge heads (NumPy)."""

import numpy as np


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    B, T, d_model = x.shape
    # Cut each position's features into heads first, (B, T, H, d_k), then move H forward.
    return x.reshape(B, T, num_heads, d_model // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    B, H, T, d_k = x.shape
    # Bring the heads back next to their features, (B, T, H, d_k), then concatenate them.
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * d_k)
