"""Works in float64 for precision: float32 inputs come back as float64 states.

exercise: paper_in_one_page/elman_rnn
caught by: keeps the dtype of x: float32 in, float32 out
message mentions: x.new_zeros
breaks: elman_rnn: dtype
"""

import torch


def elman_rnn(x, w, u, b, h0=None):
    x, w, u, b = x.double(), w.double(), u.double(), b.double()  # the mistake: float64 always
    h = x.new_zeros(x.shape[0], w.shape[1]) if h0 is None else h0.double()
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ w + h @ u + b)
        states.append(h)
    return torch.stack(states, dim=1)
