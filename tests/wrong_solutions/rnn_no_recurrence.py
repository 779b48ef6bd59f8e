"""An "RNN" whose state at step t is computed from x_t alone: h_{t-1} U was left out.

exercise: paper_in_one_page/elman_rnn
caught by: returns all states (B, T, d_hidden), equal to the course's ElmanRNN from h0 = 0
message mentions: h_{t-1}; Carry h
breaks: elman_rnn: states
"""

import torch


def elman_rnn(x, w, u, b, h0=None):
    h = x.new_zeros(x.shape[0], w.shape[1]) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):
        h = torch.tanh(x[:, t] @ w + b)  # the mistake: the previous state is never used
        states.append(h)
    return torch.stack(states, dim=1)
