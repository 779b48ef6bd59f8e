"""Stage 4 builds the table in NumPy and returns the array, not a tensor.

exercise: from_scratch/positional_encoding
caught by: returns a float tensor of shape (max_len, d_model)
message mentions: a floating-point tensor
breaks: positional_encoding: shape
"""

from pathlib import Path

import numpy as np

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def positional_encoding(max_len, d_model):
    pos = np.arange(max_len)[:, None]
    table = np.zeros((max_len, d_model))
    table[:, 0::2] = np.sin(pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model))
    table[:, 1::2] = np.cos(pos / 10000.0 ** (np.arange(0, d_model, 2) / d_model))
    return table  # the mistake: a NumPy array (torch.from_numpy(table) would do)
