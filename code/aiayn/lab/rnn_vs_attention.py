"""Recurrence versus self-attention (§1 and §4 of the paper), measured rather than asserted.

An Elman RNN layer, h_t = tanh(x_t W + h_{t-1} U + b), must run its T steps one after another;
one self-attention layer (the course's ``MultiHeadAttention``) relates all T positions in one
batched computation. This module counts the sequential steps each one takes and computes the
maximum path length between two positions (Table 1); aiayn.lab.layer_timing times them.
"""

import time
from collections import deque

import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from .._checks import check_positive, check_rank, check_size
from ..pt.attention import MultiHeadAttention


class ElmanCell(nn.Module):
    """One recurrent step: h_t = tanh(xw_t + h_{t-1} U), where xw_t = x_t W + b is precomputed.

    A module of its own so that ``count_sequential_steps`` can count its calls."""

    def __init__(self, d_hidden: int):
        super().__init__()
        self.u = nn.Parameter(torch.randn(d_hidden, d_hidden) * d_hidden ** -0.5)

    def forward(self, xw_t: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        return torch.tanh(xw_t + h @ self.u)


class ElmanRNN(nn.Module):
    """h_t = tanh(x_t W + h_{t-1} U + b) for t = 1..T, run as a Python loop over time."""

    def __init__(self, d_in: int, d_hidden: int):
        super().__init__()
        check_positive("d_in", d_in)
        check_positive("d_hidden", d_hidden)
        self.w = nn.Parameter(torch.randn(d_in, d_hidden) * d_in ** -0.5)
        self.b = nn.Parameter(torch.zeros(d_hidden))
        self.cell = ElmanCell(d_hidden)

    def forward(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
        """x (B, T, d_in), h0 (B, d_hidden) or None (zeros) -> all states (B, T, d_hidden)."""
        check_rank("x", x, 3, "(B, T, d_in)")
        check_size("x", x, -1, self.w.shape[0], "feature size")
        # x_t W + b does not depend on h, so it runs for all T at once; only the recurrence
        # through U has to wait for the previous step (cuDNN splits the work the same way).
        xw = x @ self.w + self.b
        h = x.new_zeros(x.shape[0], self.w.shape[1]) if h0 is None else h0
        states = []
        for t in range(x.shape[1]):  # T steps, each needs the h of the step before
            h = self.cell(xw[:, t], h)
            states.append(h)
        return torch.stack(states, dim=1)

    @torch.no_grad()
    def copy_from(self, rnn: nn.RNN) -> "ElmanRNN":
        """Takes the weights of a one-layer ``nn.RNN(nonlinearity='tanh')``.

        nn.RNN computes tanh(x W_ih^T + b_ih + h W_hh^T + b_hh): W = W_ih^T, U = W_hh^T, and
        its two biases add up to our one b."""
        if rnn.num_layers != 1 or rnn.nonlinearity != "tanh" or rnn.bidirectional:
            raise ValueError("copy_from needs nn.RNN with num_layers=1, nonlinearity='tanh', "
                             f"bidirectional=False, got {rnn}")
        if tuple(rnn.weight_ih_l0.shape) != tuple(self.w.T.shape):
            raise ValueError(f"nn.RNN weight_ih_l0 has shape {tuple(rnn.weight_ih_l0.shape)}, "
                             f"expected {tuple(self.w.T.shape)} (d_hidden, d_in)")
        self.w.copy_(rnn.weight_ih_l0.T)
        self.cell.u.copy_(rnn.weight_hh_l0.T)
        bias = rnn.bias_ih_l0 + rnn.bias_hh_l0 if rnn.bias else torch.zeros_like(self.b)
        self.b.copy_(bias)
        return self


def count_sequential_steps(layer: nn.Module, x: torch.Tensor) -> int:
    """Runs ``layer`` on ``x`` (B, T, d) and counts the operations that must wait for each other.

    For ``ElmanRNN`` that is the number of cell calls: each reads the state the previous call
    wrote. For ``MultiHeadAttention`` it is the number of attention calls: one, because no
    position waits for another."""
    if isinstance(layer, ElmanRNN):
        counted, run = layer.cell, lambda: layer(x)
    elif isinstance(layer, MultiHeadAttention):
        counted, run = layer, lambda: layer(x, x, x)
    else:
        raise ValueError(f"layer must be ElmanRNN or MultiHeadAttention, got {type(layer).__name__}")
    calls = []
    handle = counted.register_forward_hook(lambda *_: calls.append(1))
    try:
        with torch.no_grad():
            run()
    finally:
        handle.remove()
    return len(calls)


def matmul_flops(layer: nn.Module, x: torch.Tensor) -> int:
    """Floating-point operations of the matrix products in one forward pass on ``x`` (B, T, d),
    counted by PyTorch's ``FlopCounterMode`` (2 per multiply-add; tanh, softmax not counted).

    Elman RNN: 2 B T d^2 multiply-adds (x W and h U). Self-attention: 4 B T d^2 for the four
    projections plus 2 B T^2 d for Q K^T and weights V, so it always does more arithmetic."""
    run = (lambda: layer(x, x, x)) if isinstance(layer, MultiHeadAttention) else (lambda: layer(x))
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        run()
    return int(counter.get_total_flops())


def _neighbours(kind: str, i: int, n: int, width: int | None):
    """Positions that one operation carries information to from position i (Table 1's layers).

    recurrent: one step, i -> i + 1.  self_attention: every position.
    convolution: a kernel of odd width k, centred, reaches (k - 1) / 2 positions each side.
    restricted: self-attention over a neighbourhood of size r centred on the query: r / 2."""
    if kind == "recurrent":
        return range(i + 1, min(i + 2, n))
    if kind == "self_attention":
        return range(n)
    reach = (width - 1) // 2 if kind == "convolution" else width // 2
    return range(max(0, i - reach), min(n, i + reach + 1))


def max_path_length(kind: str, n: int, width: int | None = None) -> int:
    """Longest of the shortest paths between two positions of a length-n sequence, in operations
    (breadth-first search over the graph of what one operation connects).

    kind: 'recurrent', 'self_attention', 'convolution' (width = kernel k, odd, >= 3) or
    'restricted' (width = neighbourhood size r >= 2). The graphs look the same from every position,
    so the longest shortest path starts at an end of the sequence: we search from both ends."""
    check_positive("n", n)
    if kind not in ("recurrent", "self_attention", "convolution", "restricted"):
        raise ValueError(f"kind must be recurrent, self_attention, convolution or restricted, "
                         f"got {kind!r}")
    if kind == "convolution" and (not isinstance(width, int) or width < 3 or width % 2 == 0):
        raise ValueError(f"a convolution needs an odd kernel width >= 3, got width={width!r}")
    if kind == "restricted" and (not isinstance(width, int) or width < 2):
        raise ValueError(f"restricted self-attention needs a neighbourhood width >= 2, got width={width!r}")
    longest = 0
    for start in {0, n - 1}:
        dist = {start: 0}
        queue = deque([start])
        while queue:
            i = queue.popleft()
            for j in _neighbours(kind, i, n, width):
                if j not in dist:
                    dist[j] = dist[i] + 1
                    queue.append(j)
        longest = max(longest, max(dist.values()))
    return longest


def table1_counts(n: int, d: int, k: int = 3, r: int = 16) -> dict:
    """Table 1 for concrete sizes: (complexity per layer, sequential operations, maximum path
    length) per layer type, for n positions of width d. Complexity is Table 1's expression
    evaluated (n^2 d, n d^2, k n d^2, r n d: multiply-adds up to a constant); the path lengths
    come from ``max_path_length``; k is the kernel width, r the neighbourhood size."""
    return {
        "self_attention": (n * n * d, 1, max_path_length("self_attention", n)),
        "recurrent": (n * d * d, n, max_path_length("recurrent", n)),
        "convolution": (k * n * d * d, 1, max_path_length("convolution", n, k)),
        "restricted": (r * n * d, 1, max_path_length("restricted", n, r)),
    }


__all__ = ["ElmanCell", "ElmanRNN", "count_sequential_steps", "matmul_flops", "max_path_length",
           "table1_counts"]
