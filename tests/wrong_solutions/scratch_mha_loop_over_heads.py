"""Stage 2 with the right numbers, one head at a time: a Python loop over the heads.

exercise: from_scratch/multi_head_attention
caught by: no loop over heads: 2 heads and 4 heads run as many lines
message mentions: loop over the heads
breaks: MultiHeadAttention: no-head-loop
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class MultiHeadAttention(MultiHeadAttention):  # noqa: F821 (defined by the exec above)
    def forward(self, query, key, value, mask=None):
        q, k, v = (self.split_heads(w(x)) for w, x in
                   ((self.w_q, query), (self.w_k, key), (self.w_v, value)))
        outs, weights = [], []
        for h in range(self.num_heads):  # the mistake: one head per turn
            out, w = scaled_dot_product_attention(  # noqa: F821
                q[:, h:h + 1], k[:, h:h + 1], v[:, h:h + 1], mask)
            outs.append(out)
            weights.append(w)
        out, weights = torch.cat(outs, dim=1), torch.cat(weights, dim=1)
        B, H, T_q, d_k = out.shape
        return self.w_o(out.transpose(1, 2).reshape(B, T_q, H * d_k)), weights
