"""Stage 1 with the right numbers, but the output comes from F.scaled_dot_product_attention.

exercise: from_scratch/attention
caught by: computes the attention itself: no F.scaled_dot_product_attention, nothing of the course (aiayn)
message mentions: F.scaled_dot_product_attention
breaks: scaled_dot_product_attention: own-attention
"""

from pathlib import Path

import torch
import torch.nn.functional as F

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
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), weights  # the mistake
