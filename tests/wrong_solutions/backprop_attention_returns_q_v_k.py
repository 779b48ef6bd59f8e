"""Returns the three gradients in the order they were computed last, (grad_q, grad_v, grad_k).

exercise: backpropagation/attention_backward
caught by: returns (grad_q, grad_k, grad_v) shaped like q, k, v (T_q != T_k, d_k != d_v)
message mentions: grad_k of shape
breaks: attention_backward: shapes
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/backpropagation/attention_backward.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))

_correct = attention_backward  # noqa: F821 (defined by the exec above)


def attention_backward(grad_out, q, k, v, weights):
    grad_q, grad_k, grad_v = _correct(grad_out, q, k, v, weights)
    return grad_q, grad_v, grad_k  # the mistake: the order of the pair k, v
