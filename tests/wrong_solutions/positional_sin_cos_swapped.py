"""Puts cos on the even columns and sin on the odd ones.

exercise: from_scratch/positional_encoding
caught by: equals the paper's sinusoids, sin on even and cos on odd columns
message mentions: swapped
breaks: positional_encoding: value
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def positional_encoding(max_len, d_model):
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))  # noqa: F821
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.cos(pos * freq)  # the mistake
    pe[:, 1::2] = torch.sin(pos * freq)
    return pe
