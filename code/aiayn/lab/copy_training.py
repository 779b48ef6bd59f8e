"""What a loss curve on the copy task says (the copy-task chapter).

``loss_levels`` gives the cross-entropy of three models that know less than a copying model: it
turns a plateau of the loss into a statement about what the model has learnt so far. For a task
of ``symbols`` symbols and sequences of exactly ``length`` of them, each target being the
sequence and ``</s>``:

- uniform over the symbols: ``ln symbols``;
- the token frequencies only (``</s>`` has probability 1/(length + 1) at every position):
  ``-p ln p - (1 - p) ln((1 - p) / symbols)``, p = 1/(length + 1);
- the frequencies and where ``</s>`` goes, but not which symbol: ``length/(length + 1) ln symbols``.

``GradientNorms`` records the norm of the whole gradient before every optimizer step (a step
pre-hook: it reads the gradients, changes nothing), so that a spike in the loss can be read
next to the update that caused it. ``spikes`` finds the steps where that norm jumps.
"""

from __future__ import annotations

import math

import numpy as np
import torch


def loss_levels(symbols: int, length: int) -> dict[str, float]:
    """Cross-entropy per target token (nats) of three models that cannot copy yet, keyed
    ``uniform``, ``frequencies``, ``frequencies_and_end``."""
    for name, value in (("symbols", symbols), ("length", length)):
        if not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    p_end = 1 / (length + 1)
    return {"uniform": math.log(symbols),
            "frequencies": -p_end * math.log(p_end) - (1 - p_end) * math.log((1 - p_end) / symbols),
            "frequencies_and_end": (1 - p_end) * math.log(symbols)}


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
