"""Exercise: FIX THE BUG. This ``merge_heads`` is the one of mistake 3 of the chapter.

Unlike the other exercises this file is not empty: it holds code with a bug. Run the grader,
read what it says, fix the function without renaming it or changing its arguments, and run it again.

Check your work:  python -m aiayn.grading common_mistakes/merge_heads
"""

import torch


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of ``split_heads``.

    Promises (the grader checks each one):
      - shape: returns a tensor of shape (B, T, H * d_k).
      - order: position t of the result holds the d_k features of head 0 at position t, then
        those of head 1, ..., then those of head H - 1 (Concat(head_1, ..., head_h) of §3.2.2).
      - any-input: works for any B, H, T, d_k and any input, attention's output (weights @ V)
        included, not only a tensor fresh from split_heads.
      - gradients: gradients flow through it to the input.
    """
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).view(B, T, H * d_k)
