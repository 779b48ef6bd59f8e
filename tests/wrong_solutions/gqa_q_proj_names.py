"""Names the projections as Hugging Face's Llama does (q_proj, k_proj, v_proj, o_proj), not
w_q, w_k, w_v, w_o: the grader cannot copy the course's weights into them.

exercise: modern_attention/grouped_query
caught by: has w_q, w_k, w_v, w_o = nn.Linear with a bias; w_q and w_o: d_model -> d_model
message mentions: q_proj; w_q, w_k, w_v and w_o
breaks: GroupedQueryAttention: names
"""

from pathlib import Path

# Start from the reference solution: every definition below replaces the correct one.
_reference = (Path(__file__).resolve().parents[2]
              / "exercises/solutions/modern_attention/grouped_query.py")
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class GroupedQueryAttention(nn.Module):  # noqa: F821 (the exec)
    def __init__(self, d_model, num_heads, num_kv_heads):
        super().__init__()
        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads
        d_k = d_model // num_heads
        self.q_proj = nn.Linear(d_model, num_heads * d_k)  # noqa: F821 (the mistake: the names)
        self.k_proj = nn.Linear(d_model, num_kv_heads * d_k)  # noqa: F821
        self.v_proj = nn.Linear(d_model, num_kv_heads * d_k)  # noqa: F821
        self.o_proj = nn.Linear(num_heads * d_k, d_model)  # noqa: F821

    def forward(self, query, key, value, mask=None):
        q = split_heads(self.q_proj(query), self.num_heads)  # noqa: F821
        k = split_heads(self.k_proj(key), self.num_kv_heads)  # noqa: F821
        v = split_heads(self.v_proj(value), self.num_kv_heads)  # noqa: F821
        group = self.num_heads // self.num_kv_heads
        out, weights = scaled_dot_product_attention(  # noqa: F821
            q, repeat_kv(k, group), repeat_kv(v, group), mask)  # noqa: F821
        return self.o_proj(merge_heads(out)), weights  # noqa: F821
