"""Stage 5 with the right numbers, from the library: LayerNorm is nn.LayerNorm under the
course's name.

exercise: from_scratch/encoder_layer
caught by: LayerNorm is written here: not nn.LayerNorm
message mentions: nn.LayerNorm; LayerNorm
breaks: LayerNorm: own-norm
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class LayerNorm(nn.LayerNorm):  # noqa: F821 (nn: the exec); the mistake
    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps=eps)
