"""repeat_kv is right, but forward shares the heads with its own expand, the group axis put
before the key/value heads: (B, group, G, T, d) flattened gives the order 0, 1, 0, 1, ...

exercise: modern_attention/grouped_query
caught by: equals the course's grouped-query attention: query head i reads head i // group
message mentions: query head i then reads key/value head i % num_kv_heads
breaks: GroupedQueryAttention.forward: sharing
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
        B, _, T_k, d = k.shape
        # the mistake: the group axis in front of the heads axis
        k = k[:, None].expand(B, H // G, G, T_k, d).reshape(B, H, T_k, d)
        v = v[:, None].expand(B, H // G, G, T_k, v.shape[-1]).reshape(B, H, T_k, v.shape[-1])
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # noqa: F821
        return self.w_o(merge_heads(out)), weights  # noqa: F821
