"""Stage 5 starts LayerNorm's gain at zeros, as a bias is: every output starts at 0.

exercise: from_scratch/encoder_layer
caught by: LayerNorm: weight = ones, bias = zeros, shape (d_model,); eps = 1e-5
message mentions: weight = ones
breaks: LayerNorm: attributes
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class LayerNorm(LayerNorm):  # noqa: F821 (defined by the exec above)
    def __init__(self, d_model, eps=1e-5):
        super().__init__(d_model, eps)
        self.weight = nn.Parameter(torch.zeros(d_model))  # noqa: F821; the mistake: zeros
