"""Folds each group of query heads into the time axis, (B, G, group * T_q, d_k), so that one
matrix product serves a whole group without repeating the keys; the output is unfolded, the
weights are returned folded.

exercise: modern_attention/grouped_query
caught by: returns (output (B, T_q, d_model), weights (B, num_heads, T_q, T_k))
message mentions: folded; (B, num_heads, T_q, T_k)
breaks: GroupedQueryAttention.forward: shapes
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
        B, _, T_q, d_k = q.shape
        T_k = k.shape[2]
        q = q.reshape(B, G, H // G * T_q, d_k)  # a group's query heads one after another
        if mask is not None:
            mask = mask.expand(B, H, T_q, T_k).reshape(B, G, H // G * T_q, T_k)
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # noqa: F821
        out = out.reshape(B, H, T_q, v.shape[-1])
        return self.w_o(merge_heads(out)), weights  # noqa: F821 (the mistake: still folded)
