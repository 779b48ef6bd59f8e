"""What a loss curve on the copy task says (the copy-task chapter).

``loss_levels`` gives the training loss of the best model that knows only so much, for a
``CopyTask`` of ``symbols`` symbols and lengths uniform in ``min_len .. max_len``: it turns a
plateau of the loss into a statement about what the model has learnt so far. The loss is the
one the chapter's loop prints: cross-entropy per target token against label-smoothed targets
(``F.cross_entropy(label_smoothing=eps)``, eps / V spread over all ``vocab_size`` ids), where the
best prediction of a model that knows a distribution f over the next token is
q = (1 - eps) f + eps / V itself, and its loss is the entropy H(q):

- ``uniform``: nothing at all, every id equally likely: ``ln vocab_size`` (for any eps);
- ``frequencies``: how often each token occurs (``</s>`` is one target token in E[n] + 1), the
  same guess at every position whatever the source;
- ``frequencies_and_end``: also where ``</s>`` goes (the source's length), not which symbol;
- ``floor``: everything, the right token with certainty: H of a smoothed one-hot (0 for eps 0).

Levels of a whole batch weight each position by how often it occurs: a sequence of n symbols
has n symbol positions and one ``</s>``, so the levels are ratios of expectations over n.

``GradientNorms`` records the norm of the whole gradient before every optimizer step (a step
pre-hook: it reads the gradients, changes nothing), so that a spike in the loss can be read
next to the update that caused it. ``spikes`` finds the steps where that norm jumps.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..data.copy_task import FIRST_SYMBOL

LEVELS = ("uniform", "frequencies", "frequencies_and_end", "floor")


def entropy(q) -> float:
    """H(q) = -sum q ln q in nats, 0 ln 0 = 0."""
    q = np.asarray(q, dtype=np.float64)
    q = q[q > 0]
    return float(-(q * np.log(q)).sum()) + 0.0  # + 0.0: no -0.0


def smoothed(f, vocab_size: int, label_smoothing: float) -> np.ndarray:
    """The target F.cross_entropy trains towards when the next token has distribution ``f``
    (over the first len(f) ids; the rest have probability 0): (1 - eps) f + eps / V."""
    full = np.zeros(vocab_size)
    full[:len(f)] = f
    return (1 - label_smoothing) * full + label_smoothing / vocab_size


def loss_levels(symbols: int, min_len: int, max_len: int, vocab_size: int | None = None,
                label_smoothing: float = 0.0) -> dict[str, float]:
    """Loss per target token (nats) of the four models of the module's docstring, keyed as
    ``LEVELS``, highest first. ``vocab_size``: every id the model can predict (the symbols, the
    end token and the other special ids; default ``symbols + FIRST_SYMBOL``, as ``CopyTask``)."""
    for name, value in (("symbols", symbols), ("min_len", min_len), ("max_len", max_len)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if max_len < min_len:
        raise ValueError(f"max_len must be at least min_len, got min_len={min_len}, max_len={max_len}")
    vocab_size = symbols + FIRST_SYMBOL if vocab_size is None else vocab_size
    if not isinstance(vocab_size, int) or vocab_size < symbols + 1:
        raise ValueError(f"vocab_size must be an int >= symbols + 1 (the symbols and </s>), got {vocab_size!r}")
    if not 0.0 <= label_smoothing < 1.0:
        raise ValueError(f"label_smoothing must be in [0, 1), got {label_smoothing!r}")
    length = (min_len + max_len) / 2  # E[n]: lengths are uniform
    p_end = 1 / (length + 1)          # the share of target tokens that are </s>
    # Ids in these distributions: 0 is </s>, 1 .. symbols the symbols (the order does not matter).
    end = smoothed([1.0], vocab_size, label_smoothing)
    symbol = smoothed([0.0] + [1 / symbols] * symbols, vocab_size, label_smoothing)
    frequencies = smoothed([p_end] + [(1 - p_end) / symbols] * symbols, vocab_size, label_smoothing)
    return {"uniform": math.log(vocab_size),
            "frequencies": entropy(frequencies),
            "frequencies_and_end": (1 - p_end) * entropy(symbol) + p_end * entropy(end),
            "floor": entropy(end)}


class GradientNorms:
    """``norms[i]``: the L2 norm over all parameters of the gradient that update i + 1 applied
    (after clipping, where the Trainer clips). ``remove()`` detaches the hook."""

    def __init__(self, optimizer: torch.optim.Optimizer):
        self.norms: list[float] = []
        self._handle = optimizer.register_step_pre_hook(self._record)

    def _record(self, optimizer, args, kwargs) -> None:
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        self.norms.append(float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))))

    def remove(self) -> None:
        self._handle.remove()


def spikes(norms, start: int = 100, factor: float = 10.0) -> list[int]:
    """Updates (1-based, from ``start`` on) whose gradient norm is at least ``factor`` times the
    median norm of updates ``start`` onwards: where the optimiser overshot."""
    norms = np.asarray(norms, dtype=float)
    if start < 1 or start > len(norms):
        raise ValueError(f"start must be between 1 and the number of updates ({len(norms)}), got {start}")
    tail = norms[start - 1:]
    typical = float(np.median(tail))
    return [start + i for i in np.flatnonzero(tail >= factor * typical).tolist()]
