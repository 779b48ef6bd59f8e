"""Writes its own attention with a -inf fill and a plain softmax: a query whose keys are all
masked gets 0/0 = NaN weights.

exercise: modern_attention/grouped_query
caught by: a query with every key masked: zero weights, no NaN
message mentions: 0/0 = NaN; finite
breaks: GroupedQueryAttention.forward: all-masked
"""

import math
from pathlib import Path

# Start from the reference solution: every definition below replaces the correct one.
_reference = (Path(__file__).resolve().parents[2]
              / "exercises/solutions/modern_attention/grouped_query.py")
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)  # noqa: F821 (the mistake: a row of -inf is NaN)
    return weights @ v, weights
