"""Stage 1 returns the output alone, as F.scaled_dot_product_attention does.

exercise: from_scratch/attention
caught by: returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)
message mentions: a pair (output, weights)
breaks: scaled_dot_product_attention: shapes
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # noqa: F821 (math: the exec)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v  # the mistake: the weights are not returned
