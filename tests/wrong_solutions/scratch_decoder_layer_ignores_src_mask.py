"""Stage 6's cross-attention ignores src_mask: the decoder attends to source padding.

exercise: from_scratch/decoder_layer
caught by: DecoderLayer equals the course's Post-LN layer, with target and source masks
message mentions: src_mask was not passed
breaks: DecoderLayer: post-ln
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class DecoderLayer(DecoderLayer):  # noqa: F821 (defined by the exec above)
    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        x = self.norm1(x + self.dropout(self.self_attn(x, x, x, tgt_mask)[0]))
        x = self.norm2(x + self.dropout(self.cross_attn(x, memory, memory)[0]))  # the mistake
        return self.norm3(x + self.dropout(self.ffn(x)))
