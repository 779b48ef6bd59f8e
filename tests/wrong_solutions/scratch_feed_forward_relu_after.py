"""Stage 5's FFN puts the ReLU after the second linear map instead of between the two.

exercise: from_scratch/encoder_layer
caught by: FeedForward: w_2(relu(w_1(x))) with w_1 (d_model -> d_ff), w_2 (d_ff -> d_model)
message mentions: between w_1 and w_2
breaks: FeedForward: value
"""

from pathlib import Path

import torch

# Start from the reference solution: every definition below replaces the correct one, also
# where other classes of the file use it.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/from_scratch/transformer.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


class FeedForward(FeedForward):  # noqa: F821 (defined by the exec above)
    def forward(self, x):
        return torch.relu(self.w_2(self.w_1(x)))  # the mistake: relu after w_2
