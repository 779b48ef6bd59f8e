"""The layer types of Table 1 (§4) that the model does not use, NumPy: convolutional (also
dilated, and depthwise-separable), restricted self-attention, and the Elman RNN. The same
names, shapes and state_dict keys as ``layer_types_pt`` (and ``rnn_vs_attention.ElmanRNN``),
so weights move between the two with ``aiayn.convert.numpy_state``.

    Convolution            y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j,   j = 0 .. k-1
    SeparableConvolution   the same, factored: one width-k filter per feature, then a d x d map
    restricted attention   softmax over the r keys centred on each query, (r - 1) / 2 each side
    ElmanRNN               h_t = tanh(x_t W + h_{t-1} U + b), a loop over time
"""

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._checks import check_heads, check_positive, check_rank, check_size
from ..np.attention import masked_softmax, merge_heads, split_heads
from ..np.nn import Linear, Module, normal, uniform
from .layer_types_pt import check_width  # pure Python: one check for both back ends


def windows(x: np.ndarray, size: int, dilation: int = 1, causal: bool = False) -> np.ndarray:
    """(..., T, d) -> (..., T, d, size): for every position t the ``size`` rows
    t + (j - (size-1)/2) * dilation (centred), or t - (size-1-j) * dilation (``causal``: the
    past only), zeros beyond the ends. A view of the padded input."""
    span = (size - 1) * dilation
    before = span if causal else span // 2
    pad = [(0, 0)] * x.ndim
    pad[-2] = (before, span - before)
    padded = np.pad(x, pad)  # zeros before the first and after the last row
    return sliding_window_view(padded, span + 1, axis=-2)[..., ::dilation]


def band_mask(T: int, r: int) -> np.ndarray:
    """(1, 1, T, T) bool, True = may attend: query i sees key j when |i - j| <= (r - 1) / 2."""
    check_width("r", r)
    i = np.arange(T)
    return (np.abs(i[:, None] - i[None, :]) <= (r - 1) // 2)[None, None]


class Convolution(Module):
    """One 1-D convolution over time, centred and zero-padded so that T stays T.

    Parameters in nn.Conv1d's layout: weight (d_out, d_in, k), bias (d_out); ``dilation`` D
    spaces the k taps D positions apart (ByteNet's dilated convolutions, §2 and §4);
    ``causal`` puts all k taps on t and before (ByteNet's and ConvS2S's decoders), any k."""

    def __init__(self, d_in: int, d_out: int, kernel_size: int, dilation: int = 1,
                 causal: bool = False):
        check_positive("d_in", d_in)
        check_positive("d_out", d_out)
        (check_positive if causal else check_width)("kernel_size", kernel_size)
        check_positive("dilation", dilation)
        self._kernel_size, self._dilation, self._causal = kernel_size, dilation, causal
        bound = 1.0 / math.sqrt(d_in * kernel_size)  # nn.Conv1d's default initialisation range
        self.weight = uniform(bound, (d_out, d_in, kernel_size))
        self.bias = uniform(bound, (d_out,))

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (B, T, d_in) -> (B, T, d_out): the windows times the weights, summed over the
        input features c and the taps j."""
        check_rank("x", x, 3, "(B, T, d_in)")
        check_size("x", x, -1, self.weight.shape[1], "feature size")
        patches = windows(x, self._kernel_size, self._dilation, self._causal)  # (B, T, d_in, k)
        return np.tensordot(patches, self.weight, axes=([2, 3], [1, 2])) + self.bias


class DepthwiseConvolution(Module):
    """Each feature filtered over time on its own: nn.Conv1d(d, d, k, groups=d), k n d MACs."""

    def __init__(self, d: int, kernel_size: int, dilation: int = 1):
        check_positive("d", d)
        check_width("kernel_size", kernel_size)
        check_positive("dilation", dilation)
        self._kernel_size, self._dilation = kernel_size, dilation
        bound = 1.0 / math.sqrt(kernel_size)
        self.weight = uniform(bound, (d, 1, kernel_size))
        self.bias = uniform(bound, (d,))

    def forward(self, x: np.ndarray) -> np.ndarray:
        check_rank("x", x, 3, "(B, T, d)")
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        patches = windows(x, self._kernel_size, self._dilation)  # (B, T, d, k)
        return (patches * self.weight[:, 0]).sum(axis=-1) + self.bias  # feature c meets filter c


class SeparableConvolution(Module):
    """Depthwise-separable convolution (Chollet, 2017; §4): a width-k filter per feature, then a
    pointwise (k = 1) convolution that mixes features. k n d + n d^2 MACs instead of k n d^2."""

    def __init__(self, d_in: int, d_out: int, kernel_size: int, dilation: int = 1):
        self.depthwise = DepthwiseConvolution(d_in, kernel_size, dilation)
        self.pointwise = Convolution(d_in, d_out, 1)

    def forward(self, x: np.ndarray) -> np.ndarray:
        return self.pointwise(self.depthwise(x))


def block_band_mask(T: int, r: int, block: int) -> np.ndarray:
    """(blocks, block, block + r - 1) bool: query t = b * block + i may attend to key
    s = b * block - (r-1)/2 + m when |t - s| <= (r-1)/2 and s is a real position."""
    reach = (r - 1) // 2
    blocks = -(-T // block)
    t = np.arange(blocks * block).reshape(blocks, block, 1)
    s = (np.arange(blocks) * block - reach).reshape(blocks, 1, 1) + np.arange(block + 2 * reach)
    return (np.abs(t - s) <= reach) & (s >= 0) & (s < T)


def restricted_attention(q, k, v, r: int):
    """Scaled dot-product attention in which query t sees only keys t - (r-1)/2 .. t + (r-1)/2.

    q, k: (B, H, T, d_k), v: (B, H, T, d_v) -> (out (B, H, T, d_v), weights (B, H, T, r)); slot j
    of query t's weights belongs to key t - (r-1)/2 + j (zero where that falls off the ends).
    Queries go in blocks of c = (r-1)/2, scored together against the c + r - 1 keys the block
    sees, with the band mask zeroing the keys a query may not see (as the PyTorch twin)."""
    check_width("r", r)
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_rank(name, a, 4, "(B, H, T, d)")
    if not q.shape[:3] == k.shape[:3] == v.shape[:3]:
        raise ValueError(f"restricted self-attention needs q, k, v with the same (B, H, T), got "
                         f"{q.shape}, {k.shape}, {v.shape}")
    B, H, T, d_k = q.shape
    reach = (r - 1) // 2
    c = max(reach, 1)  # queries per block
    pad = -T % c  # the last block, filled up with zero queries (cut off at the end)
    q_blocks = np.pad(q, [(0, 0), (0, 0), (0, pad), (0, 0)]).reshape(B, H, -1, c, d_k)
    k_blocks, v_blocks = (sliding_window_view(np.pad(x, [(0, 0), (0, 0), (reach, pad + reach), (0, 0)]),
                                              c + 2 * reach, axis=2)[:, :, ::c]
                          for x in (k, v))  # (B, H, blocks, d, c + 2 reach)
    scores = (q_blocks / math.sqrt(d_k)) @ k_blocks
    weights = masked_softmax(scores, block_band_mask(T, r, c))
    out = (weights @ np.swapaxes(v_blocks, -1, -2)).reshape(B, H, -1, v.shape[-1])[:, :, :T]
    slots = np.arange(c)[:, None] + np.arange(r)
    in_window = weights[..., np.arange(c)[:, None], slots]  # key = query + j
    return out, in_window.reshape(B, H, -1, r)[:, :, :T]


class RestrictedSelfAttention(Module):
    """Multi-head self-attention with each query restricted to its r neighbours (§4); the
    parameters of the course's MultiHeadAttention (w_q, w_k, w_v, w_o)."""

    def __init__(self, d_model: int, num_heads: int, r: int):
        check_heads(d_model, num_heads)
        check_width("r", r)
        self.d_model, self.num_heads, self.r = d_model, num_heads, r
        self.w_q, self.w_k = Linear(d_model, d_model), Linear(d_model, d_model)
        self.w_v, self.w_o = Linear(d_model, d_model), Linear(d_model, d_model)

    def forward(self, x: np.ndarray):
        """x (B, T, d_model) -> (out (B, T, d_model), weights (B, H, T, r))."""
        check_rank("x", x, 3, "(B, T, d_model)")
        check_size("x", x, -1, self.d_model, "feature size")
        q, k, v = (split_heads(w(x), self.num_heads) for w in (self.w_q, self.w_k, self.w_v))
        out, weights = restricted_attention(q, k, v, self.r)
        return self.w_o(merge_heads(out)), weights


class ElmanCell(Module):
    def __init__(self, d_hidden: int):
        self.u = normal(d_hidden ** -0.5, (d_hidden, d_hidden))

    def forward(self, xw_t: np.ndarray, h: np.ndarray) -> np.ndarray:
        return np.tanh(xw_t + h @ self.u)


class ElmanRNN(Module):
    """h_t = tanh(x_t W + h_{t-1} U + b) for t = 1..T, a loop over time (state keys w, b, cell.u)."""

    def __init__(self, d_in: int, d_hidden: int):
        check_positive("d_in", d_in)
        check_positive("d_hidden", d_hidden)
        self.w = normal(d_in ** -0.5, (d_in, d_hidden))
        self.b = np.zeros(d_hidden)
        self.cell = ElmanCell(d_hidden)

    def forward(self, x: np.ndarray, h0: np.ndarray | None = None) -> np.ndarray:
        """x (B, T, d_in), h0 (B, d_hidden) or None (zeros) -> all states (B, T, d_hidden)."""
        check_rank("x", x, 3, "(B, T, d_in)")
        check_size("x", x, -1, self.w.shape[0], "feature size")
        xw = x @ self.w + self.b  # no dependence on h: all T at once
        h = np.zeros((x.shape[0], self.w.shape[1])) if h0 is None else h0
        states = []
        for t in range(x.shape[1]):  # T steps, each needs the h of the step before
            h = self.cell(xw[:, t], h)
            states.append(h)
        return np.stack(states, axis=1)


__all__ = ["Convolution", "DepthwiseConvolution", "ElmanCell", "ElmanRNN", "RestrictedSelfAttention",
           "SeparableConvolution", "band_mask", "block_band_mask", "restricted_attention", "windows"]
