"""What the residual connection buys in a deep stack (chapter residual_and_layer_norm).

A stack of ``depth`` sub-layers, each the paper's feed-forward network (§3.3) with PyTorch's
default initialisation, wrapped one of four ways:

    skip=False, norm=False   x <- FFN(x)                   a plain deep network
    skip=True,  norm=False   x <- x + FFN(x)               the residual connection alone
    skip=False, norm=True    x <- LayerNorm(FFN(x))        normalisation alone
    skip=True,  norm=True    x <- LayerNorm(x + FFN(x))    the paper's wrapper (Post-LN)

Without the skip, the gradient that reaches layer 1 is a product of ``depth`` Jacobians, one per
layer; when each shrinks it, the product vanishes exponentially. With the skip each layer's
Jacobian is I + J_FFN, and the identity carries the gradient down. LayerNorm rescales the
signal, so a normalised stack keeps its gradient's size without the skip, but its output forgets
its input: different inputs come out nearly parallel (``output_similarity``).

Everything is float64 and seeded: the same arguments give the same numbers on every machine up
to rounding, and a 48-layer stack takes well under a second on one CPU core.
"""

from __future__ import annotations

import torch
from torch import nn

from .._checks import check_positive
from ..pt.feedforward import PositionwiseFeedForward
from ..pt.normalization import LayerNorm


class FeedForwardStack(nn.Module):
    """``depth`` FFN sub-layers of width d_model (inner width d_ff), with or without the skip
    connection and the LayerNorm after each; weights drawn from ``torch.manual_seed(seed)``."""

    def __init__(self, depth: int, skip: bool, norm: bool, d_model: int = 64, d_ff: int = 256,
                 seed: int = 0):
        super().__init__()
        check_positive("depth", depth)
        self.skip, self.norm = bool(skip), bool(norm)
        with torch.random.fork_rng(devices=[]):  # the caller's random stream is left alone
            torch.manual_seed(seed)
            self.ffns = nn.ModuleList(PositionwiseFeedForward(d_model, d_ff) for _ in range(depth))
        self.norms = nn.ModuleList(LayerNorm(d_model) for _ in range(depth))
        self.double()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for ffn, norm in zip(self.ffns, self.norms):
            y = x + ffn(x) if self.skip else ffn(x)
            x = norm(y) if self.norm else y
        return x


def example_batch(d_model: int = 64, batch: int = 4, length: int = 10, seed: int = 1):
    """(inputs, targets), both (batch, length, d_model), standard normal, float64: a regression
    problem whose loss is the mean squared error."""
    generator = torch.Generator().manual_seed(seed)
    shape = (batch, length, d_model)
    return (torch.randn(shape, generator=generator, dtype=torch.float64),
            torch.randn(shape, generator=generator, dtype=torch.float64))


def first_layer_gradient(depth: int, skip: bool, norm: bool = False, d_model: int = 64,
                         seed: int = 0) -> float:
    """The norm of the gradient of the mean squared error with respect to every parameter of
    the bottom sub-layer (its two weight matrices and biases): what reaches layer 1."""
    stack = FeedForwardStack(depth, skip, norm, d_model=d_model, seed=seed)
    inputs, targets = example_batch(d_model)
    loss = (stack(inputs) - targets).square().mean()
    grads = torch.autograd.grad(loss, list(stack.ffns[0].parameters()))
    return float(torch.sqrt(sum(g.square().sum() for g in grads)))


def output_similarity(depth: int, skip: bool, norm: bool = False, d_model: int = 64,
                      num_inputs: int = 50, seed: int = 0) -> float:
    """The mean cosine similarity between the outputs of ``num_inputs`` different random input
    vectors (every pair once): near 0 when the outputs still tell the inputs apart, near 1 when
    the stack maps every input to almost the same direction."""
    check_positive("num_inputs", num_inputs)
    if num_inputs < 2:
        raise ValueError(f"num_inputs must be at least 2 (pairs are compared), got {num_inputs}")
    stack = FeedForwardStack(depth, skip, norm, d_model=d_model, seed=seed)
    inputs, _ = example_batch(d_model, batch=1, length=num_inputs)
    with torch.no_grad():
        out = nn.functional.normalize(stack(inputs)[0], dim=-1)
    cosines = out @ out.T
    upper = torch.triu_indices(num_inputs, num_inputs, offset=1)
    return float(cosines[upper[0], upper[1]].mean())


def sweep(measure, depths, **kwargs) -> dict[str, list[float]]:
    """``measure`` (``first_layer_gradient`` or ``output_similarity``) at every depth, for the
    four wrappers: {"plain", "skip", "norm", "skip+norm"} -> one value per depth."""
    wrappers = {"plain": (False, False), "skip": (True, False), "norm": (False, True),
                "skip+norm": (True, True)}
    return {name: [measure(int(depth), skip=skip, norm=norm, **kwargs) for depth in depths]
            for name, (skip, norm) in wrappers.items()}
