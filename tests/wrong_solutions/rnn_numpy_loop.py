"""Runs the loop in NumPy and wraps the result in a tensor: right numbers, no gradient.

exercise: paper_in_one_page/elman_rnn
caught by: gradients reach the first input and equal the course's
message mentions: keep the computation in PyTorch
breaks: elman_rnn: pytorch
"""

import numpy as np
import torch


def elman_rnn(x, w, u, b, h0=None):
    x_, w_, u_, b_ = (a.detach().numpy() for a in (x, w, u, b))  # the mistake: out of autograd
    h = np.zeros((x_.shape[0], w_.shape[1])) if h0 is None else h0.detach().numpy()
    states = []
    for t in range(x_.shape[1]):
        h = np.tanh(x_[:, t] @ w_ + h @ u_ + b_)
        states.append(h)
    return torch.from_numpy(np.stack(states, axis=1)).to(x.dtype)
