"""Complexity per layer (Table 1, §4), counted and measured on real layers.

For each layer type, on one sequence of n positions of width d:

    macs(kind, ...)         multiply-adds of the course's implementation, by formula
    table1_term(kind, ...)  Table 1's expression: n^2 d, n d^2, k n d^2, r n d (and k n d + n d^2)
    count_flops(layer, x)   the same arithmetic as torch.utils.flop_counter counts it (2 per MAC)
    peak_bytes(fn)          the most bytes of tensors alive at once while fn() runs

Only matrix products are counted (softmax, tanh, biases are O(n d) or O(h n^2) and left out,
as the FLOP counter leaves them out). Time is measured by aiayn.lab.layer_timing.
"""

import weakref

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves
from torch.utils.flop_counter import FlopCounterMode

from .._checks import check_positive
from ..pt.attention import MultiHeadAttention, scaled_dot_product_attention
from .layer_types_pt import Convolution, RestrictedSelfAttention, SeparableConvolution
from .rnn_vs_attention import ElmanRNN

# "recurrent" is the course's Elman RNN, a Python loop over time; "torch_rnn" the same layer as
# torch.nn.RNN, whose loop runs in C++: what the loop costs, beside what the recurrence costs.
KINDS = ("self_attention", "attention_alone", "recurrent", "torch_rnn", "convolution", "separable",
         "restricted")


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}, got {kind!r}")


class AttentionAlone(nn.Module):
    """softmax(X X^T / sqrt(d)) X: self-attention without projections, one head. What Table 1
    counts for a self-attention layer, n^2 d, and nothing else."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        heads = x[:, None]  # (B, 1, T, d): one head of width d
        return scaled_dot_product_attention(heads, heads, heads)[0][:, 0]


class Layer(nn.Module):
    """Any of Table 1's layers as x (B, T, d) -> y (B, T, d), attention weights dropped."""

    def __init__(self, kind: str, d: int, k: int = 3, r: int = 33, heads: int = 8):
        super().__init__()
        _check_kind(kind)
        self.kind = kind
        self.inner = {"self_attention": lambda: MultiHeadAttention(d, heads),
                      "attention_alone": AttentionAlone,
                      "recurrent": lambda: ElmanRNN(d, d),
                      "torch_rnn": lambda: nn.RNN(d, d, batch_first=True),
                      "convolution": lambda: Convolution(d, d, k),
                      "separable": lambda: SeparableConvolution(d, d, k),
                      "restricted": lambda: RestrictedSelfAttention(d, heads, r)}[kind]()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.inner(x, x, x) if self.kind == "self_attention" else self.inner(x)
        return out[0] if isinstance(out, tuple) else out


def macs(kind: str, n: int, d: int, k: int = 3, r: int = 33) -> dict:
    """Multiply-adds of one layer on one sequence, by step; 'total' is their sum."""
    _check_kind(kind)
    check_positive("n", n)
    check_positive("d", d)
    c = max((r - 1) // 2, 1)  # restricted attention scores blocks of c queries against c + r - 1 keys
    n_blocks = -(-n // c) * c  # n rounded up to whole blocks
    steps = {
        "self_attention": {"projections": 4 * n * d * d, "attention": 2 * n * n * d},
        "attention_alone": {"attention": 2 * n * n * d},  # Q K^T and weights V, Q = K = V = X
        "recurrent": {"input": n * d * d, "recurrence": n * d * d},  # x_t W and h_{t-1} U
        "torch_rnn": {"input": n * d * d, "recurrence": n * d * d},
        "convolution": {"convolution": k * n * d * d},
        "separable": {"depthwise": k * n * d, "pointwise": n * d * d},
        "restricted": {"projections": 4 * n * d * d, "attention": 2 * n_blocks * (c + r - 1) * d},
    }[kind]
    return {**steps, "total": sum(steps.values())}


def table1_term(kind: str, n: int, d: int, k: int = 3, r: int = 33) -> int:
    """Table 1's complexity per layer, the expression inside the O(...), evaluated."""
    _check_kind(kind)
    return {"self_attention": n * n * d, "attention_alone": n * n * d, "recurrent": n * d * d,
            "torch_rnn": n * d * d,
            "convolution": k * n * d * d, "separable": k * n * d + n * d * d,  # §4's O(k n d + n d^2)
            "restricted": r * n * d}[kind]


def count_flops(layer: nn.Module, x: torch.Tensor) -> int:
    """FLOPs of the matrix products of one forward pass, as ``FlopCounterMode`` counts them."""
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        layer(x)
    return int(counter.get_total_flops())


class LiveTensorBytes(TorchDispatchMode):
    """Counts the bytes of every tensor that an operation creates, until that tensor's memory
    is freed; ``peak`` is the most that was alive at once. Inputs and weights, which exist
    before, are not counted; nor is scratch space that a kernel (BLAS) uses internally."""

    def __init__(self):
        super().__init__()
        self.live = self.peak = 0
        self._alive = set()  # data pointers of the storages we counted and that still exist

    def _freed(self, ptr: int, nbytes: int) -> None:
        self._alive.discard(ptr)
        self.live -= nbytes

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        known = {t.untyped_storage().data_ptr() for t in tree_leaves((args, kwargs))
                 if isinstance(t, torch.Tensor)}  # a view or an in-place result is not new memory
        for t in tree_leaves(out):
            if not isinstance(t, torch.Tensor):
                continue
            storage = t.untyped_storage()
            ptr = storage.data_ptr()
            if ptr == 0 or ptr in known or ptr in self._alive:
                continue
            self._alive.add(ptr)
            self.live += storage.nbytes()
            self.peak = max(self.peak, self.live)
            # PyTorch keeps one Python object per storage for as long as the memory lives,
            # so the finaliser runs exactly when the memory is given back.
            weakref.finalize(storage, self._freed, ptr, storage.nbytes())
        return out


def peak_bytes(fn) -> int:
    """Peak bytes of tensors alive at once while ``fn()`` runs (under ``torch.no_grad``),
    its output included."""
    with torch.no_grad(), LiveTensorBytes() as tracker:
        out = fn()
    del out
    return tracker.peak


__all__ = ["KINDS", "AttentionAlone", "Layer", "LiveTensorBytes", "count_flops", "macs", "peak_bytes",
           "table1_term"]
