"""Divides grad_v by sqrt(d_k) too, as if the scale sat in out = P V.

exercise: backpropagation/attention_backward
caught by: grad_v = P^T dL/d(out)
message mentions: grad_v has no 1/sqrt(d_k)
breaks: attention_backward: grad-v
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/backpropagation/attention_backward.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))

_correct = attention_backward  # noqa: F821 (defined by the exec above)


def attention_backward(grad_out, q, k, v, weights):
    grad_q, grad_k, grad_v = _correct(grad_out, q, k, v, weights)
    return grad_q, grad_k, grad_v / np.sqrt(q.shape[-1])  # noqa: F821; the mistake
