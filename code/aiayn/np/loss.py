"""The training loss and its gradient, NumPy: cross-entropy against label-smoothed targets
(§5.4), padding ignored; the twin of ``aiayn.train.loss.token_loss_sum``.

"During training, we employed label smoothing of value eps_ls = 0.1." With V vocabulary
entries the target distribution is q = (1 - eps) one-hot(reference) + eps / V (the reference
and padding included, as in ``F.cross_entropy(label_smoothing=eps)``), and the loss of one
token is the cross-entropy -sum_v q_v log p_v. Padding positions (``PAD_ID``) do not count.
"""

import numpy as np

from .._checks import check_rank
from ..data.specials import PAD_ID


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """log p over the last axis, computed as z - max - log(sum exp(z - max)): never overflows."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def token_loss_sum(logits: np.ndarray, labels: np.ndarray, label_smoothing: float = 0.0) -> float:
    """Summed over the non-padding target tokens: logits (B, T, V), labels (B, T) -> a float.
    A sum, not a mean: the caller divides by the number of target tokens of the batch.

    -sum_v q_v log p_v = (1 - eps) (-log p_reference) + eps mean_v(-log p_v)."""
    _check(logits, labels, label_smoothing)
    log_p = log_softmax(logits)
    reference = np.take_along_axis(log_p, labels[..., None], axis=-1)[..., 0]
    per_token = -(1.0 - label_smoothing) * reference - label_smoothing * log_p.mean(axis=-1)
    return float(per_token[labels != PAD_ID].sum())


def token_loss_sum_backward(logits: np.ndarray, labels: np.ndarray,
                            label_smoothing: float = 0.0) -> np.ndarray:
    """d(token_loss_sum)/dlogits (B, T, V). Softmax and cross-entropy together have the
    simplest gradient of the whole model: p - q, the predicted minus the target distribution.
    Padding positions do not count, so their rows are 0."""
    _check(logits, labels, label_smoothing)
    grad = np.exp(log_softmax(logits)) - label_smoothing / logits.shape[-1]  # p - eps / V ...
    reference = labels[..., None]
    at_reference = np.take_along_axis(grad, reference, axis=-1) - (1.0 - label_smoothing)
    np.put_along_axis(grad, reference, at_reference, axis=-1)  # ... - (1 - eps) at the reference
    return grad * (labels != PAD_ID)[..., None]


def _check(logits, labels, label_smoothing) -> None:
    check_rank("logits", logits, 3, "(B, T, V)")
    if logits.shape[:2] != labels.shape:
        raise ValueError(f"logits {tuple(logits.shape)} and labels {tuple(labels.shape)} disagree "
                         "on (B, T)")
    if not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing}")
