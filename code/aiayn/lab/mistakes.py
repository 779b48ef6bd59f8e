"""Instruments of the common-mistakes chapter: what a demonstration measures, kept off the page.

- ``MatrixProductCounter`` counts the matrix products a computation asks PyTorch for, to show
  that a loop over heads runs the same function with many more operations;
- ``attention_sharpness`` says how peaked attention weights are (the mean largest weight and
  the mean entropy of a row), to show weights drawn from ``rand`` saturating the softmax;
- ``nan_positions`` names the positions whose output holds a NaN, to follow a fully masked row
  from one layer to the next;
- ``output_change`` is the largest change of one position's output when the input changes
  elsewhere: the test that catches a mask which lets the future in, or shuts the context out.
"""

from __future__ import annotations

import torch


class MatrixProductCounter(torch.overrides.TorchFunctionMode):
    """``with MatrixProductCounter() as c: ...`` then ``c.count``: the calls of ``@``,
    ``matmul`` and ``linear`` made inside (each is at least one kernel)."""

    NAMES = ("__matmul__", "__rmatmul__", "matmul", "bmm", "linear")

    def __init__(self):
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += getattr(func, "__name__", "") in self.NAMES
        return func(*args, **(kwargs or {}))


def attention_sharpness(weights: torch.Tensor) -> tuple[float, float]:
    """(mean of each row's largest weight, mean entropy of a row in nats) of attention weights
    ``(..., T_q, T_k)`` whose rows sum to 1. Uniform rows give (1 / T_k, log T_k); one-hot rows
    give (1, 0)."""
    if weights.dim() < 2:
        raise ValueError(f"weights must be (..., T_q, T_k), got shape {tuple(weights.shape)}")
    weights = weights.detach().double()
    entropy = -(weights * torch.log(weights.clamp_min(1e-300))).sum(-1)
    return weights.max(-1).values.mean().item(), entropy.mean().item()


def nan_positions(x: torch.Tensor) -> list[int]:
    """The positions (axis -2 of ``x``: ``(..., T, d)``) whose features hold a NaN anywhere in
    the leading axes."""
    if x.dim() < 2:
        raise ValueError(f"x must be (..., T, d), got shape {tuple(x.shape)}")
    per_position = torch.isnan(x).any(-1).reshape(-1, x.shape[-2]).any(0)
    return per_position.nonzero().flatten().tolist()


def output_change(run, a: torch.Tensor, b: torch.Tensor, position: int = 0) -> float:
    """max |run(a) - run(b)| at ``position`` (axis 1 of the outputs, ``(B, T, d)``), without
    gradients: run two inputs that differ only elsewhere, and see whether ``position`` notices."""
    with torch.no_grad():
        out_a, out_b = run(a), run(b)
    if out_a.shape != out_b.shape or out_a.dim() < 2:
        raise ValueError(f"run must return (B, T, ...) of one shape, got {tuple(out_a.shape)} "
                         f"and {tuple(out_b.shape)}")
    return (out_a[:, position] - out_b[:, position]).abs().max().item()
