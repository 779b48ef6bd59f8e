"""Always starts from zeros, even when an initial state h0 is given.

exercise: paper_in_one_page/elman_rnn
caught by: starts from a given h0
message mentions: h0
breaks: elman_rnn: h0
"""

import torch


def elman_rnn(x, w, u, b, h0=None):
    h = x.new_zeros(x.shape[0], w.shape[1])  # the mistake: h0 ignored
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ w + h @ u + b)
        states.append(h)
    return torch.stack(states, dim=1)
