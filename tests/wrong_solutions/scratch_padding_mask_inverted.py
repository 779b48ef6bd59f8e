"""Stage 3 marks the padding with True (the mask of what to block, not of what may be seen).

exercise: from_scratch/masks
caught by: padding_mask: bool (B, 1, 1, T), False exactly at padding
message mentions: mask is inverted; padding must be False
breaks: padding_mask: mask
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def padding_mask(tokens, pad_id):
    return (tokens == pad_id)[:, None, None, :]  # the mistake: == instead of !=
