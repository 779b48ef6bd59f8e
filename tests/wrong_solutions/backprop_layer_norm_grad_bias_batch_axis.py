"""Sums grad_bias over the batch axis only: (T, d_model), not (d_model,).

exercise: backpropagation/layer_norm_backward
caught by: grad_weight = sum of dL/dy * x_hat, grad_bias = sum of dL/dy, over every position
message mentions: sum over all leading axes
breaks: layer_norm_backward: grad-bias
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/backpropagation/layer_norm_backward.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))

_correct = layer_norm_backward  # noqa: F821 (defined by the exec above)


def layer_norm_backward(grad_y, x, weight, eps=1e-5):
    grad_x, grad_weight, _ = _correct(grad_y, x, weight, eps)
    return grad_x, grad_weight, grad_y.sum(axis=0)  # the mistake: one axis of the positions
