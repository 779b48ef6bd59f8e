"""Inverts the mask, as if True meant "blocked" (nn.MultiheadAttention's key_padding_mask):
in this course True means "may attend".

exercise: modern_attention/grouped_query
caught by: the mask reaches every query head: padding and causal, True = may attend
message mentions: inverted; True means
breaks: GroupedQueryAttention.forward: mask
"""

from pathlib import Path

# Start from the reference solution: every definition below replaces the correct one.
_reference = (Path(__file__).resolve().parents[2]
              / "exercises/solutions/modern_attention/grouped_query.py")
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


_correct = GroupedQueryAttention  # noqa: F821 (the exec)


class GroupedQueryAttention(_correct):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, None if mask is None else ~mask)  # the mistake
