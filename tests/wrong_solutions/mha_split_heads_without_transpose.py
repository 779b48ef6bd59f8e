"""Splits the heads with a plain view to (B, H, T, d_k), without the transpose.

exercise: from_scratch/multi_head_attention
caught by: self-attention equals the course's (same weights)
message mentions: transpose; (B, T, H, d_k)
breaks: MultiHeadAttention: value
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class MultiHeadAttention(MultiHeadAttention):  # noqa: F821 (defined by the exec above)
    def split_heads(self, x):
        return x.view(x.size(0), self.num_heads, x.size(1), self.d_k)  # the mistake
