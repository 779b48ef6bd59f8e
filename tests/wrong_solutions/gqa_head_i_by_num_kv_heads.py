"""Query head i reads key/value head i // num_kv_heads: divided by the number of groups, not
by their size. With num_kv_heads = num_heads every query head reads head 0.

exercise: modern_attention/grouped_query
caught by: num_kv_heads = num_heads is the paper's multi-head attention, num_kv_heads = 1 multi-query
message mentions: i // num_kv_heads; the group's size
breaks: GroupedQueryAttention.forward: ends
"""

from pathlib import Path

# Start from the reference solution: every definition below replaces the correct one.
_reference = (Path(__file__).resolve().parents[2]
              / "exercises/solutions/modern_attention/grouped_query.py")
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class GroupedQueryAttention(GroupedQueryAttention):  # noqa: F821 (the exec)
    def forward(self, query, key, value, mask=None):
        H, G = self.num_heads, self.num_kv_heads
        q = split_heads(self.w_q(query), H)  # noqa: F821
        k, v = split_heads(self.w_k(key), G), split_heads(self.w_v(value), G)  # noqa: F821
        reads = torch.arange(H) // G  # noqa: F821 (the mistake: // G, not // (H // G))
        out, weights = scaled_dot_product_attention(q, k[:, reads], v[:, reads], mask)  # noqa: F821
        return self.w_o(merge_heads(out)), weights  # noqa: F821
