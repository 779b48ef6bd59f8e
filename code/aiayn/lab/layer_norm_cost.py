"""What LayerNorm costs written out in PyTorch against ``F.layer_norm`` (chapter
residual_and_layer_norm, a "Going deeper" box): the operators each runs forwards and backwards.

``aiayn.pt.normalization.LayerNorm`` calls ``F.layer_norm``; the NumPy twin writes the formula
out. Written out in PyTorch, the formula is a chain of operators, each a pass over ``x`` and, on a
GPU, a kernel launched from Python; ``F.layer_norm`` is one operator each way. The chapter states
the counts ``operator_counts`` finds (asserted in a hidden cell); it does not time them, since a
timing on a shared machine would be no verdict.
"""

import os

import torch
import torch.nn.functional as F

# Before the profiler's first use: otherwise its tracing library logs to stderr, which a
# notebook would show and the book build rejects.
os.environ.setdefault("KINETO_LOG_LEVEL", "10")
from torch.profiler import profile  # noqa: E402

# Operators that only relabel memory (a new view of the same data): not counted.
RELABEL_ONLY = {"aten::view", "aten::expand", "aten::detach", "aten::as_strided"}


def layer_norm_written_out(x, weight, bias, eps: float = 1e-5):
    """The formula, line by line, in PyTorch (biased variance, as ``nn.LayerNorm``)."""
    mean = x.mean(dim=-1, keepdim=True)
    var = x.var(dim=-1, keepdim=True, unbiased=False)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def layer_norm_fused(x, weight, bias, eps: float = 1e-5):
    """What ``aiayn.pt.normalization.LayerNorm`` calls."""
    return F.layer_norm(x, weight.shape, weight, bias, eps)


def operators(run) -> list[str]:
    """The operators PyTorch runs in ``run()``: aten operators not nested in another one
    (``aten::linear`` counts once, not also the ``aten::addmm`` it calls), relabelling left out."""
    with profile() as prof:
        run()
    return [e.name for e in prof.events() if e.name.startswith("aten::") and e.name not in RELABEL_ONLY
            and (e.cpu_parent is None or not e.cpu_parent.name.startswith("aten::"))]


def operator_counts(layer_norm, x, weight, bias) -> tuple[list[str], list[str]]:
    """The operators of one forward pass of ``layer_norm(x, weight, bias)`` and of its backward
    pass (the gradients of x, weight and bias for an upstream gradient of ones)."""
    out = layer_norm(x, weight, bias)
    upstream = torch.ones_like(out)  # made outside the profiled calls: not the backward's work
    forward = operators(lambda: layer_norm(x, weight, bias))
    backward = operators(lambda: torch.autograd.grad(out, (x, weight, bias), upstream))
    return forward, backward
