"""Right numbers from torch.nn.RNN with the weights copied in: the loop over time the chapter
is about is hidden in the library.

exercise: paper_in_one_page/elman_rnn
caught by: a loop over t: 6 steps run more lines than 3
message mentions: write the recurrence as a loop
breaks: elman_rnn: loop
"""

import torch


def elman_rnn(x, w, u, b, h0=None):
    rnn = torch.nn.RNN(w.shape[0], w.shape[1], batch_first=True).to(x.dtype)
    with torch.no_grad():  # the mistake: the library's loop, not one written here
        rnn.weight_ih_l0.copy_(w.T)
        rnn.weight_hh_l0.copy_(u.T)
        rnn.bias_ih_l0.copy_(b)
        rnn.bias_hh_l0.zero_()
    h = x.new_zeros(1, x.shape[0], w.shape[1]) if h0 is None else h0[None]
    return rnn(x, h)[0]
