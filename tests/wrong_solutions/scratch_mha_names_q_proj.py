"""Stage 2 names the projections as nn.MultiheadAttention's users know them (q_proj, ...),
not w_q, w_k, w_v, w_o: the grader cannot copy the course's weights into them.

exercise: from_scratch/multi_head_attention
caught by: has w_q, w_k, w_v, w_o = nn.Linear(d_model, d_model)
message mentions: missing: w_k.bias
breaks: MultiHeadAttention: attributes
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class MultiHeadAttention(nn.Module):  # noqa: F821 (nn: the exec)
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.num_heads, self.d_k = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (  # the mistake: the names
            nn.Linear(d_model, d_model) for _ in range(4))  # noqa: F821

    def forward(self, query, key, value, mask=None):
        B, H = query.size(0), self.num_heads
        q, k, v = (w(x).view(B, -1, H, self.d_k).transpose(1, 2) for w, x in
                   ((self.q_proj, query), (self.k_proj, key), (self.v_proj, value)))
        out, weights = scaled_dot_product_attention(q, k, v, mask)  # noqa: F821
        return self.out_proj(out.transpose(1, 2).reshape(B, -1, H * self.d_k)), weights
