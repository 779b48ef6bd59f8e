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
    h0: (B, d_hidden) or None: the state before the first step.

    Promises (the grader checks each one):
      - states: returns h_1 .. h_T stacked on the time axis, (B, T, d_hidden), with
        h_t = tanh(x_t W + h_{t-1} U + b).
      - h0: the first step starts from h0 when one is given, from zeros when h0 is None.
      - loop: a Python loop over t, since step t needs h_{t-1} (the whole point of the
        chapter): no torch.nn.RNN, no course class (x_t W + b, which does not depend on h, may
        be computed for all t at once).
      - dtype: the result has the dtype of ``x`` (float32 in, float32 out).
      - pytorch: the computation stays in PyTorch: gradients reach ``x``.
    """
    raise NotImplementedError
