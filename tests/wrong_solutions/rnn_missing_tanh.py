"""A linear recurrence: h_t = x_t W + h_{t-1} U + b, the tanh forgotten.

exercise: paper_in_one_page/elman_rnn
caught by: equals torch.nn.RNN with the same weights (W = W_ih^T, U = W_hh^T, b = b_ih + b_hh)
message mentions: tanh; linear
breaks: elman_rnn: states
"""

import torch


def elman_rnn(x, w, u, b, h0=None):
    h = x.new_zeros(x.shape[0], w.shape[1]) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):
        h = x[:, t] @ w + h @ u + b  # the mistake: no tanh
        states.append(h)
    return torch.stack(states, dim=1)
