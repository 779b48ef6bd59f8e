"""Stage 5's encoder layer never applies its dropout.

exercise: from_scratch/encoder_layer
caught by: EncoderLayer applies dropout in train mode, and none in eval mode
message mentions: apply self.dropout
breaks: EncoderLayer: dropout
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class EncoderLayer(EncoderLayer):  # noqa: F821 (defined by the exec above)
    def forward(self, x, mask=None):
        x = self.norm1(x + self.self_attn(x, x, x, mask)[0])  # the mistake: no self.dropout
        return self.norm2(x + self.ffn(x))
