"""The tutorial LayerNorm: (x - mean) / (std + eps), with torch's default (unbiased) std.

exercise: from_scratch/encoder_layer
caught by: LayerNorm divides by √(variance + eps), not std + eps (inputs of tiny variance)
message mentions: std + eps; variance
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
        std = x.std(dim=-1, keepdim=True)  # the mistake: std + eps, not sqrt(var + eps)
        return (x - mean) / (std + self.eps) * self.weight + self.bias
