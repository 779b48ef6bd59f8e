"""Takes the course's grouped-query attention, the implementation it is graded against.

exercise: modern_attention/grouped_query
caught by: shares the heads itself: nothing of aiayn's grouped-query attention, no fused attention
message mentions: aiayn/pt/gqa.py; write the layer here
breaks: GroupedQueryAttention.forward: own
"""

from pathlib import Path

from aiayn.pt import gqa

# Start from the reference solution: every definition below replaces the correct one.
_reference = (Path(__file__).resolve().parents[2]
              / "exercises/solutions/modern_attention/grouped_query.py")
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class GroupedQueryAttention(gqa.GroupedQueryAttention):  # the mistake: not written here
    pass
