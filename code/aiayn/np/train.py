"""Training in NumPy (§5.3, §5.4): the learning-rate schedule, Adam, and one update.

The twin of ``aiayn.train`` (schedule, Trainer.train_step) without PyTorch: nothing here,
nor in the model, loss and backward passes it calls, imports torch.
"""

import numpy as np

from ..data.specials import PAD_ID
from .loss import token_loss_sum, token_loss_sum_backward


def transformer_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    """lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5) (§5.3), times
    ``factor``; ``step`` counts from 1. The same function as ``aiayn.train.schedule``'s, written
    again so that training in NumPy does not import PyTorch (a test checks they agree)."""
    if step < 1:
        raise ValueError(f"step counts from 1 (the first update), got {step}")
    if warmup_steps < 1:
        raise ValueError(f"warmup_steps must be positive, got {warmup_steps}")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


class Adam:
    """Adam (Kingma & Ba, 2015) with the constants of §5.3: beta1 = 0.9, beta2 = 0.98, eps = 1e-9.

    Per parameter it keeps m, a running mean of the gradients, and v, of their squares; the
    update is lr * m_hat / (sqrt(v_hat) + eps), where the hats undo the bias towards 0 of
    means that start at 0. The rate is an argument of ``step``: the schedule sets it."""

    def __init__(self, model, betas: tuple = (0.9, 0.98), eps: float = 1e-9):
        self.params = {}  # name -> array; a tied weight (one array, three names) is one parameter
        for name, param in model.named_parameters():
            if all(param is not seen for seen in self.params.values()):
                self.params[name] = param
        self.beta1, self.beta2 = betas
        self.eps = eps
        self.m = {name: np.zeros_like(p) for name, p in self.params.items()}
        self.v = {name: np.zeros_like(p) for name, p in self.params.items()}
        self.steps = 0

    def step(self, gradients: dict, lr: float) -> None:
        """Updates every parameter in place (so all names of a tied weight see the update)."""
        self.steps += 1
        b1, b2, t = self.beta1, self.beta2, self.steps
        for name, param in self.params.items():
            grad = gradients[name]
            self.m[name] = b1 * self.m[name] + (1 - b1) * grad
            self.v[name] = b2 * self.v[name] + (1 - b2) * grad * grad
            m_hat = self.m[name] / (1 - b1 ** t)
            v_hat = self.v[name] / (1 - b2 ** t)
            param -= lr * m_hat / (np.sqrt(v_hat) + self.eps)


def train_step(model, optimizer: Adam, src: np.ndarray, tgt: np.ndarray, lr: float,
               label_smoothing: float = 0.1) -> float:
    """One update on one batch, as ``aiayn.train.Trainer.train_step`` makes it in PyTorch:
    teacher forcing (the decoder reads tgt[:, :-1] and predicts tgt[:, 1:]), the label-smoothed
    loss per target token, its gradient by backpropagation, then Adam at rate ``lr``.
    src (B, S) and tgt (B, T) are padded token ids. Returns the loss per target token."""
    decoder_input, labels = tgt[:, :-1], tgt[:, 1:]
    num_tokens = int((labels != PAD_ID).sum())
    if num_tokens == 0:
        raise ValueError(f"tgt of shape {tgt.shape} has no target token to learn from "
                         "(all of tgt[:, 1:] is padding)")
    model.train()
    model.zero_grad()
    logits = model(src, decoder_input)
    loss = token_loss_sum(logits, labels, label_smoothing) / num_tokens
    model.backward(token_loss_sum_backward(logits, labels, label_smoothing) / num_tokens)
    optimizer.step(model.gradients(), lr)
    return loss
