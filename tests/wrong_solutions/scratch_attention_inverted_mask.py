"""Stage 1 reads the mask the other way round (True = blocked, nn.MultiheadAttention's way).

exercise: from_scratch/attention
caught by: masked keys get exactly zero weight (True = may attend)
message mentions: mask is inverted; True means
breaks: scaled_dot_product_attention: mask
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
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)  # the mistake: mask
    weights = scores.softmax(dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    return weights @ v, weights
