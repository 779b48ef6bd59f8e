"""What a loss curve on the copy task says (the copy-task chapter).

``loss_levels`` gives the cross-entropy of three models that know less than a copying model: it
turns a plateau of the loss into a statement about what the model has learnt so far. For a task
of ``symbols`` symbols and sequences of exactly ``length`` of them, each target being the
sequence and ``</s>``:

- uniform over the symbols: ``ln symbols``;
- the token frequencies only (``</s>`` has probability 1/(length + 1) at every position):
  ``-p ln p - (1 - p) ln((1 - p) / symbols)``, p = 1/(length + 1);
- the frequencies and where ``</s>`` goes, but not which symbol: ``length/(length + 1) ln symbols``.

``first_run`` is the chapter's short first attempt: a 2-layer model (d_model 128, 4 heads,
d_ff 256, dropout 0.1) on sequences of 5 of 97 symbols, 16 per batch, PyTorch's default Adam,
no label smoothing, a constant rate (or the paper's schedule peaking at 1e-3), for a few steps.

``GradientNorms`` records the norm of the whole gradient before every optimizer step (a step
pre-hook: it reads the gradients, changes nothing), so that a spike in the loss can be read
next to the update that caused it. ``spikes`` finds the steps where that norm jumps.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch.optim.lr_scheduler import LambdaLR

from ..config import TransformerConfig
from ..pt.model import Transformer
from ..train.trainer import TrainConfig, Trainer

FIRST_RUN_MODEL = {"d_model": 128, "num_heads": 4, "num_layers": 2, "d_ff": 256, "dropout": 0.1, "max_len": 64}


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


def first_run(task, held_out, steps: int, lr: float | None = None, warmup: int | None = None, seed: int = 0):
    """Trains a fresh ``FIRST_RUN_MODEL`` on ``task`` (its batches exclude ``held_out``) for
    ``steps`` updates at the constant rate ``lr``, or else with the paper's schedule scaled to
    peak at 1e-3 after ``warmup`` steps. Returns (model, history), the loss logged every 5 steps."""
    if (lr is None) == (warmup is None):
        raise ValueError(f"give either lr or warmup, got lr={lr!r}, warmup={warmup!r}")
    torch.manual_seed(seed)
    model = Transformer(TransformerConfig(task.vocab_size, task.vocab_size, **FIRST_RUN_MODEL))
    factor = 1.0 if warmup is None else 1e-3 * math.sqrt(FIRST_RUN_MODEL["d_model"] * warmup)  # peak 1e-3
    trainer = Trainer(model, TrainConfig(max_steps=steps, warmup_steps=warmup or 1, lr_factor=factor,
                                         label_smoothing=0.0, adam_betas=(0.9, 0.999), adam_eps=1e-8,
                                         log_every=5, progress=False))
    if lr is not None:
        trainer.scheduler = LambdaLR(trainer.optimizer, lambda step: lr)
    trainer.fit(task.batches(batch_size=16, num_batches=100, seed=seed, exclude=held_out))
    return model.eval(), trainer.history


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
