"""Reference solution: the Elman RNN as a loop over time (PyTorch)."""

import torch


def elman_rnn(x: torch.Tensor, w: torch.Tensor, u: torch.Tensor, b: torch.Tensor,
              h0: torch.Tensor | None = None) -> torch.Tensor:
    xw = x @ w + b  # no dependence on h: all T steps in one product
    h = x.new_zeros(x.shape[0], w.shape[1]) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):  # the sequential part: step t waits for step t - 1
        h = torch.tanh(xw[:, t] + h @ u)
        states.append(h)
    return torch.stack(states, dim=1)
