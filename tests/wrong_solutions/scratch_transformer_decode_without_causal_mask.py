"""Stage 7's decode builds only the padding mask of the target: every position sees the
future, so teacher forcing leaks the answer.

exercise: from_scratch/transformer
caught by: decoding is causal: a later target token changes no earlier logits
message mentions: target_mask
breaks: Transformer: forward
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class Transformer(Transformer):  # noqa: F821 (defined by the exec above)
    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        if tgt_mask is None:
            tgt_mask = padding_mask(tgt, self.pad_id)  # noqa: F821; the mistake: no causal part
        return super().decode(tgt, memory, src_mask, tgt_mask)
