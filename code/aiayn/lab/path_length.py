"""Sequential operations and maximum path length (Table 1, §4), measured with autograd.

    layers_to_connect(kind, n)   stack layers of one type until the last output position
                                 depends on the first input position: how many it took
    dependency_pattern(...)      which input positions each output position depends on
                                 (the Jacobian's non-zero pattern, positions x positions)
    table1_path_length(kind, n)  what Table 1's last column says, made exact for these layers
    graph_depth(output)          the longest chain of operations autograd recorded from an
                                 input to ``output``: operations that must run one after another

A recurrent layer is one layer but n steps. To stack it like the others we run its update on
all positions at once, h_t <- tanh(x_t W + h_{t-1} U + b) from the h of the previous sweep
(``recurrent_sweep``): after s sweeps the first s states are exact, after n all of them, and
h_{n-1} depends on x_0 only from the n-th sweep on. Parallel hardware does not help: the n
sweeps are sequential operations, and x_0 reaches h_{n-1} through n of them.
"""

import itertools
import math

import torch
import torch.autograd.forward_ad as fwAD
from torch import nn

from .._checks import check_positive
from ..pt.attention import MultiHeadAttention
from .layer_types_pt import Convolution, RestrictedSelfAttention, check_width
from .rnn_vs_attention import ElmanRNN

PATH_KINDS = ("self_attention", "recurrent", "convolution", "dilated", "restricted")


def recurrent_sweep(rnn: ElmanRNN, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """One position-parallel step of the recurrence: (B, T, d) states -> new states, where
    new h_t = tanh(x_t W + b + h_{t-1} U) and h_{-1} = 0."""
    previous = torch.cat([torch.zeros_like(h[:, :1]), h[:, :-1]], dim=1)  # shift right by one
    return torch.tanh(x @ rnn.w + rnn.b + previous @ rnn.cell.u)


def _init(layer: nn.Module, generator: torch.Generator) -> nn.Module:
    """Weights N(0, 1/fan_in) per matrix (per tap for convolutions), in float64: each layer
    keeps signals near unit size, so that after hundreds of layers a dependency is a number
    far from zero, never an underflow mistaken for independence."""
    with torch.no_grad():
        for p in layer.parameters():
            fan_in = p.shape[1] if p.dim() > 1 else 1
            p.copy_(torch.randn(p.shape, generator=generator, dtype=torch.float64) / math.sqrt(fan_in))
    return layer.double()


def layer_stack(kind: str, d: int, width: int | None, generator: torch.Generator):
    """An endless stack of layers of ``kind``, each a function (x, h) -> h, made on demand."""
    if kind == "recurrent":  # one cell with one set of weights, swept again and again
        rnn = _init(ElmanRNN(d, d), generator)
        with torch.no_grad():  # U = 0.9 x orthogonal and small inputs keep tanh near its linear
            # range: over a thousand steps the signal from x_0 fades by ~0.9 per step, not ~0.5
            rnn.cell.u.copy_(0.9 * torch.linalg.qr(torch.randn(d, d, generator=generator,
                                                              dtype=torch.float64))[0])
            rnn.w.mul_(0.1)
        while True:
            yield lambda x, h: recurrent_sweep(rnn, x, h)
    for index in itertools.count():
        if kind == "self_attention":
            attention = _init(MultiHeadAttention(d, 1), generator)
            yield lambda x, h, layer=attention: layer(h, h, h)[0]
        elif kind == "restricted":
            attention = _init(RestrictedSelfAttention(d, 1, width), generator)
            yield lambda x, h, layer=attention: layer(h)[0]
        elif kind == "convolution":  # contiguous, centred taps: (k - 1) / 2 further per layer
            conv = _init(Convolution(d, d, width), generator)
            yield lambda x, h, layer=conv: layer(h)
        else:  # dilated (ByteNet, WaveNet): layer l puts its k taps on t, t - k^l, .., t - (k-1) k^l
            conv = _init(Convolution(d, d, width, dilation=width ** index, causal=True), generator)
            yield lambda x, h, layer=conv: layer(h)


def _check(kind: str, n: int, width) -> None:
    check_positive("n", n)
    if kind not in PATH_KINDS:
        raise ValueError(f"kind must be one of {', '.join(PATH_KINDS)}, got {kind!r}")
    if kind in ("convolution", "restricted"):
        check_width("width", width)  # centred: odd
    if kind in ("convolution", "dilated", "restricted") and (not isinstance(width, int) or width < 2 + (kind != "dilated")):
        raise ValueError(f"{kind} needs a width that reaches a neighbour (dilated >= 2, "
                         f"others >= 3), got width={width!r}")


def layers_to_connect(kind: str, n: int, width: int | None = None, d: int = 4,
                      max_layers: int | None = None, seed: int = 0) -> int:
    """How many stacked layers of ``kind`` until output position n - 1 depends on input
    position 0: forward-mode autograd pushes a tangent in at position 0 (every feature, random
    values) and we watch, layer by layer, for a non-zero tangent at the last position.

    ``width``: kernel width k (convolution, dilated) or neighbourhood size r (restricted)."""
    _check(kind, n, width)
    max_layers = max_layers or n + 1
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(1, n, d, generator=generator, dtype=torch.float64)
    tangent = torch.zeros_like(x)
    tangent[:, 0] = torch.randn(d, generator=generator, dtype=torch.float64)
    with torch.no_grad(), fwAD.dual_level():
        x_dual = fwAD.make_dual(x, tangent)
        h = torch.zeros_like(x) if kind == "recurrent" else x_dual
        for depth, layer in zip(range(1, max_layers + 1), layer_stack(kind, d, width, generator)):
            h = layer(x_dual, h)
            tangent = fwAD.unpack_dual(h).tangent
            if tangent[:, -1].abs().max() > 0:
                return depth
            reached = tangent[tangent != 0].abs()
            if reached.numel() and reached.min() < 1e-250:  # zero may soon mean "underflowed"
                raise RuntimeError(f"{kind}, n = {n}: the signal from position 0 fell to "
                                   f"{reached.min().item():.1e} after {depth} layers; a zero "
                                   "would no longer prove independence (use a smaller n)")
    raise RuntimeError(f"{kind}: position {n - 1} still independent of position 0 after "
                       f"{max_layers} layers")


def dependency_pattern(kind: str, n: int, layers: int, width: int | None = None, d: int = 4,
                       seed: int = 0) -> torch.Tensor:
    """(n, n) bool after ``layers`` stacked layers: [i, j] is True when output position i
    depends on input position j, read off the full Jacobian (reverse-mode autograd)."""
    _check(kind, n, width)
    check_positive("layers", layers)
    generator = torch.Generator().manual_seed(seed)
    stack = list(itertools.islice(layer_stack(kind, d, width, generator), layers))
    x = torch.randn(1, n, d, generator=generator, dtype=torch.float64)

    def run(x):
        h = torch.zeros_like(x) if kind == "recurrent" else x
        for layer in stack:
            h = layer(x, h)
        return h

    jacobian = torch.autograd.functional.jacobian(run, x)  # (1, n, d, 1, n, d)
    return (jacobian[0, :, :, 0] != 0).any(dim=-1).any(dim=1)  # any feature to any feature


def table1_path_length(kind: str, n: int, width: int | None = None) -> int:
    """Table 1's last column made exact for these layers: one contiguous kernel or window reaches
    (width - 1) / 2 positions further per layer, L dilated layers reach width^L positions, the
    recurrence one position per step, self-attention every position at once. At least one
    layer: with n = 1 the output still needs one layer to depend on its input."""
    _check(kind, n, width)
    if kind == "self_attention" or n == 1:
        return 1
    if kind == "recurrent":
        return n
    if kind == "dilated":
        layers = 0
        while width ** layers < n:  # integers: no rounding error at exact powers
            layers += 1
        return layers
    return -(-(n - 1) // ((width - 1) // 2))


def graph_depth(output: torch.Tensor) -> int:
    """The number of operations on the longest chain autograd recorded from a leaf to
    ``output``: each needs the result of the one before, so no hardware can run them at once."""
    if output.grad_fn is None:
        raise ValueError("output has no autograd graph: compute it from a tensor with "
                         "requires_grad=True, outside torch.no_grad()")
    depth, stack = {}, [(output.grad_fn, False)]
    while stack:  # iterative: an RNN's graph is thousands of nodes deep
        node, children_done = stack.pop()
        if node in depth:
            continue
        children = [child for child, _ in node.next_functions if child is not None]
        if children_done:
            depth[node] = 1 + max((depth[c] for c in children), default=0)
        else:
            stack.append((node, True))
            stack.extend((c, False) for c in children if c not in depth)
    return depth[output.grad_fn]


__all__ = ["PATH_KINDS", "dependency_pattern", "graph_depth", "layer_stack", "layers_to_connect",
           "recurrent_sweep", "table1_path_length"]
