"""The Elman RNN in NumPy, the twin of ``aiayn.lab.rnn_vs_attention.ElmanRNN`` (the paper in one
page).

h_t = tanh(x_t W + h_{t-1} U + b). The loop over t is the point of the chapter: step t reads the
state that step t - 1 wrote, so a sentence of T positions costs T steps one after another,
however many processors are waiting.
"""

import numpy as np

from .._checks import check_rank, check_size


def elman_rnn(x: np.ndarray, w: np.ndarray, u: np.ndarray, b: np.ndarray,
              h0: np.ndarray | None = None) -> np.ndarray:
    """x (B, T, d_in), w (d_in, d), u (d, d), b (d,), h0 (B, d) or None (zeros) -> states (B, T, d)."""
    check_rank("x", x, 3, "(B, T, d_in)")
    check_size("x", x, -1, w.shape[0], "feature size")
    check_size("u", u, 0, w.shape[1], "rows")
    xw = x @ w + b  # no h in it: the input projection runs for all T positions in one product
    h = np.zeros((x.shape[0], w.shape[1])) if h0 is None else h0
    states = []
    for t in range(x.shape[1]):  # T steps: step t needs the h of step t - 1
        h = np.tanh(xw[:, t] + h @ u)
        states.append(h)
    return np.stack(states, axis=1)


__all__ = ["elman_rnn"]
