"""Stage 7 gives the output projection its own matrix instead of the target embedding's (§3.4).

exercise: from_scratch/transformer
caught by: parameters named like the course's; out_proj.weight IS tgt_embed.weight
message mentions: tgt_embed.weight; §3.4
breaks: Transformer: attributes
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class Transformer(Transformer):  # noqa: F821 (defined by the exec above)
    def __init__(self, src_vocab, tgt_vocab, *args, **kwargs):
        super().__init__(src_vocab, tgt_vocab, *args, **kwargs)
        self.out_proj.weight = nn.Parameter(self.tgt_embed.weight.detach().clone())  # noqa: F821
