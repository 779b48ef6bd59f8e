"""Stage 1 fills with -inf and stops there: a query whose keys are all masked gets a softmax of
-inf only, 0/0 = NaN.

exercise: from_scratch/attention
caught by: a query with every key masked: zero weights, zero output, no NaN
message mentions: zero weights; NaN
breaks: scaled_dot_product_attention: all-masked
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
        scores = scores.masked_fill(~mask, float("-inf"))  # the mistake: nothing guards the row
    weights = scores.softmax(dim=-1)
    return weights @ v, weights
