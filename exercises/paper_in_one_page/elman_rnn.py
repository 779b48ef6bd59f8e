"""Exercise: the Elman RNN of §1, h_t = tanh(x_t W + h_{t-1} U + b), as a loop over time (PyTorch).

Check your work:  python -m aiayn.grading paper_in_one_page/elman_rnn
"""

import torch


def elman_rnn(x: torch.Tensor, w: torch.Tensor, u: torch.Tensor, b: torch.Tensor,
              h0: torch.Tensor | None = None) -> torch.Tensor:
    """All hidden states of one recurrent layer: h_t = tanh(x_t W + h_{t-1} U + b), t = 1..T.

    x:  (B, T, d_in)       the input sequence (batch first, like the rest of the course)
    w:  (d_in, d_hidden)   input weights W
    u:  (d_hidden, d_hidden) recurrent weights U
    b:  (d_hidden,)        bias
    h0: (B, d_hidden) or None: the state before the first step; None means zeros.
    Returns the states h_1 .. h_T stacked on the time axis: (B, T, d_hidden).

    Step t needs h_{t-1}: that dependency is the whole point of the chapter, so it must be a
    loop over t. (x_t W + b does not depend on h and may be computed for all t at once.)
    Stay in PyTorch, in the dtype of ``x``.
    """
    raise NotImplementedError
