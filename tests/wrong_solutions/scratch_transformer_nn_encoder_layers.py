"""Stage 7 stacks the library's nn.TransformerEncoderLayer instead of the file's EncoderLayer.

exercise: from_scratch/transformer
caught by: built from this file's classes: no nn.Transformer* inside
message mentions: nn.TransformerEncoderLayer; EncoderLayer
breaks: Transformer: own-model
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class Transformer(Transformer):  # noqa: F821 (defined by the exec above)
    def __init__(self, src_vocab, tgt_vocab, d_model=512, num_heads=8, num_layers=6,
                 d_ff=2048, dropout=0.1, max_len=512, pad_id=0):
        super().__init__(src_vocab, tgt_vocab, d_model, num_heads, num_layers, d_ff, dropout,
                         max_len, pad_id)
        self.encoder = nn.ModuleList(  # noqa: F821; the mistake: the library's layer
            nn.TransformerEncoderLayer(d_model, num_heads, d_ff, dropout, batch_first=True)  # noqa: F821
            for _ in range(num_layers))

    def encode(self, src, src_mask=None):
        x = self.embed(self.src_embed, src)
        for layer in self.encoder:
            x = layer(x, src_key_padding_mask=src == self.pad_id)
        return x
