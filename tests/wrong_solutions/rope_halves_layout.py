"""Pairs feature i with feature i + d_k/2 (rotate_half, the layout of GPT-NeoX and of Hugging
Face's Llama) instead of the neighbours (2i, 2i+1).

exercise: rotary_positions/rotate
caught by: equals the course's rotation: pair i at position m turned by m theta_i
message mentions: rotate_half; (2i, 2i+1)
breaks: rotate: value
"""

import numpy as np


def rotate(x, start=0):
    T, d_k = x.shape[-2:]
    angle = np.arange(start, start + T)[:, None] * 10000.0 ** (-np.arange(0, d_k, 2) / d_k)
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    first, second = x[..., :d_k // 2], x[..., d_k // 2:]  # the mistake: the halves as pairs
    return np.concatenate([first * cos - second * sin, first * sin + second * cos], axis=-1)
