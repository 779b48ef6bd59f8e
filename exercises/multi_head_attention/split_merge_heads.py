"""Exercise: split the features into heads and merge them back (§3.2.2), in NumPy.

Check your work:  python -m aiayn.grading multi_head_attention/split_merge_heads
"""

import numpy as np


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, d_model) -> (B, H, T, d_k), with H = num_heads and d_k = d_model // H.

    The d_model features of a position are cut into H consecutive pieces of d_k, one per
    head, and the heads axis is then moved in front of the time axis so that each head
    attends on its own. d_model is divisible by num_heads.

    Promises (the grader checks each one):
      - value: returns an array (B, H, T, d_k) whose head h at position t holds the features
        x[b, t, h * d_k:(h + 1) * d_k].
      - input-unchanged: ``x`` is not modified in place (its values and its shape).
    """
    raise NotImplementedError


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of ``split_heads``.

    Promises (the grader checks each one):
      - value: returns an array (B, T, H * d_k) whose position t holds head 0's d_k features
        at t, then head 1's, ..., then head H - 1's (Concat(head_1, ..., head_h) of §3.2.2):
        merge_heads(split_heads(x, H)) is x.
    """
    raise NotImplementedError
