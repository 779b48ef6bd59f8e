"""A Pre-LN encoder layer, x + Sublayer(LayerNorm(x)), where the paper has Post-LN.

exercise: from_scratch/encoder_layer
caught by: EncoderLayer equals the course's Post-LN layer, with a padding mask
message mentions: Pre-LN; Post-LN
breaks: EncoderLayer: post-ln
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class EncoderLayer(EncoderLayer):  # noqa: F821
    def forward(self, x, mask=None):
        h = self.norm1(x)
        x = x + self.dropout(self.self_attn(h, h, h, mask)[0])
        return x + self.dropout(self.ffn(self.norm2(x)))
