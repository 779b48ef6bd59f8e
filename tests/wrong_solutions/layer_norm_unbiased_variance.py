"""LayerNorm with torch.var's default, the unbiased variance (divides by d_model - 1).

exercise: from_scratch/encoder_layer
caught by: LayerNorm equals nn.LayerNorm on ordinary inputs
message mentions: unbiased
breaks: LayerNorm: value
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class LayerNorm(LayerNorm):  # noqa: F821
    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True)  # the mistake: unbiased=True by default
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias
