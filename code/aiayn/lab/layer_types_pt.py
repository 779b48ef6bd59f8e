"""The layer types of Table 1 (§4) that the model does not use, PyTorch: convolutional (also
dilated, and depthwise-separable) and restricted self-attention. ``layer_types_np`` is the
same code in NumPy (same names, shapes and state_dict keys).

Every layer maps (B, T, d_in) to (B, T, d_out), position t looking at positions near t:

    Convolution            y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j,   j = 0 .. k-1
    SeparableConvolution   the same, factored: one width-k filter per feature, then a d x d map
    restricted attention   softmax over the r keys centred on each query, (r - 1) / 2 each side

All are written out (sliding windows, then matrix products), not delegated to nn.Conv1d, so
that the tests can hold them against nn.Conv1d and against full attention under a band mask.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn

from .._checks import check_heads, check_positive, check_rank, check_size
from ..pt.attention import masked_softmax, merge_heads, split_heads


def check_width(name: str, value) -> None:
    """Kernels and neighbourhoods are centred on the position: an odd width."""
    check_positive(name, value)
    if value % 2 == 0:
        raise ValueError(f"{name} must be odd (a window centred on its position), got {value}")


def windows(x: torch.Tensor, size: int, dilation: int = 1, causal: bool = False) -> torch.Tensor:
    """(..., T, d) -> (..., T, d, size): for every position t the ``size`` rows
    t + (j - (size-1)/2) * dilation (centred), or t - (size-1-j) * dilation (``causal``: the
    past only), zeros beyond the ends. A view of the padded input."""
    span = (size - 1) * dilation
    before = span if causal else span // 2
    padded = F.pad(x, (0, 0, before, span - before))  # zeros before the first, after the last row
    return padded.unfold(-2, span + 1, 1)[..., ::dilation]


def band_mask(T: int, r: int, device=None) -> torch.Tensor:
    """(1, 1, T, T) bool, True = may attend: query i sees key j when |i - j| <= (r - 1) / 2."""
    check_width("r", r)
    i = torch.arange(T, device=device)
    return ((i[:, None] - i[None, :]).abs() <= (r - 1) // 2)[None, None]


class Convolution(nn.Module):
    """One 1-D convolution over time, centred and zero-padded so that T stays T.

    Parameters in nn.Conv1d's layout: weight (d_out, d_in, k), bias (d_out); ``dilation`` D
    spaces the k taps D positions apart (ByteNet's dilated convolutions, §2 and §4);
    ``causal`` puts all k taps on t and before (ByteNet's and ConvS2S's decoders), any k."""

    def __init__(self, d_in: int, d_out: int, kernel_size: int, dilation: int = 1,
                 causal: bool = False):
        super().__init__()
        check_positive("d_in", d_in)
        check_positive("d_out", d_out)
        (check_positive if causal else check_width)("kernel_size", kernel_size)
        check_positive("dilation", dilation)
        self.kernel_size, self.dilation, self.causal = kernel_size, dilation, causal
        bound = 1.0 / math.sqrt(d_in * kernel_size)  # nn.Conv1d's default initialisation range
        self.weight = nn.Parameter(torch.empty(d_out, d_in, kernel_size).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(d_out).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x (B, T, d_in) -> (B, T, d_out). k n d_in d_out multiply-adds: one product of the
        (B, T, d_in k) windows with the (d_in k, d_out) weights (im2col)."""
        check_rank("x", x, 3, "(B, T, d_in)")
        check_size("x", x, -1, self.weight.shape[1], "feature size")
        patches = windows(x, self.kernel_size, self.dilation, self.causal).flatten(-2)  # (B, T, d_in k)
        return patches @ self.weight.flatten(1).T + self.bias


class DepthwiseConvolution(nn.Module):
    """Each feature filtered over time on its own: nn.Conv1d(d, d, k, groups=d), k n d MACs."""

    def __init__(self, d: int, kernel_size: int, dilation: int = 1):
        super().__init__()
        check_positive("d", d)
        check_width("kernel_size", kernel_size)
        check_positive("dilation", dilation)
        self.kernel_size, self.dilation = kernel_size, dilation
        bound = 1.0 / math.sqrt(kernel_size)
        self.weight = nn.Parameter(torch.empty(d, 1, kernel_size).uniform_(-bound, bound))
        self.bias = nn.Parameter(torch.empty(d).uniform_(-bound, bound))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_rank("x", x, 3, "(B, T, d)")
        check_size("x", x, -1, self.weight.shape[0], "feature size")
        patches = windows(x, self.kernel_size, self.dilation)  # (B, T, d, k)
        # c indexes features: feature c only ever meets filter c (einsum runs it as one bmm)
        return torch.einsum("btck,ck->btc", patches, self.weight[:, 0]) + self.bias


class SeparableConvolution(nn.Module):
    """Depthwise-separable convolution (Chollet, 2017; §4): a width-k filter per feature, then a
    pointwise (k = 1) convolution that mixes features. k n d + n d^2 MACs instead of k n d^2."""

    def __init__(self, d_in: int, d_out: int, kernel_size: int, dilation: int = 1):
        super().__init__()
        self.depthwise = DepthwiseConvolution(d_in, kernel_size, dilation)
        self.pointwise = Convolution(d_in, d_out, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pointwise(self.depthwise(x))


def block_band_mask(T: int, r: int, block: int, device=None) -> torch.Tensor:
    """(blocks, block, block + r - 1) bool: query t = b * block + i may attend to key
    s = b * block - (r-1)/2 + m when |t - s| <= (r-1)/2 and s is a real position."""
    reach = (r - 1) // 2
    blocks = -(-T // block)
    t = torch.arange(blocks * block, device=device).view(blocks, block, 1)
    s = (torch.arange(blocks, device=device) * block - reach).view(blocks, 1, 1) + \
        torch.arange(block + 2 * reach, device=device)
    return ((t - s).abs() <= reach) & (s >= 0) & (s < T)


def restricted_attention(q, k, v, r: int):
    """Scaled dot-product attention in which query t sees only keys t - (r-1)/2 .. t + (r-1)/2.

    q, k: (B, H, T, d_k), v: (B, H, T, d_v) -> (out (B, H, T, d_v), weights (B, H, T, r)); slot j
    of query t's weights belongs to key t - (r-1)/2 + j (zero where that falls off the ends).

    Queries go in blocks of c = (r-1)/2; a block's c queries together see c + r - 1 keys, so one
    (c, d_k) x (d_k, c + r - 1) product per block scores them all, and the band mask zeroes the
    keys a query may not see: 2 n (c + r - 1) d multiply-adds instead of 2 n^2 d. (Scoring each
    query against its own r keys alone does fewer, but as n tiny products it ran ten times slower.)"""
    check_width("r", r)
    for name, a in (("q", q), ("k", k), ("v", v)):
        check_rank(name, a, 4, "(B, H, T, d)")
    if not q.shape[:3] == k.shape[:3] == v.shape[:3]:
        raise ValueError(f"restricted self-attention needs q, k, v with the same (B, H, T), got "
                         f"{tuple(q.shape)}, {tuple(k.shape)}, {tuple(v.shape)}")
    T, reach = q.shape[2], (r - 1) // 2
    c = max(reach, 1)  # queries per block
    pad = -T % c  # the last block, filled up with zero queries (cut off at the end)
    q_blocks = F.pad(q, (0, 0, 0, pad)).unflatten(2, (-1, c))  # (B, H, blocks, c, d_k)
    # keys and values of each block: a window of c + 2 reach rows, one block further each time
    k_blocks, v_blocks = (F.pad(x, (0, 0, reach, pad + reach)).unfold(2, c + 2 * reach, c)
                          for x in (k, v))  # (B, H, blocks, d, c + 2 reach)
    scores = (q_blocks / math.sqrt(q.shape[-1])) @ k_blocks
    weights = masked_softmax(scores, block_band_mask(T, r, c, q.device))
    out = (weights @ v_blocks.transpose(-1, -2)).flatten(2, 3)[:, :, :T]
    slots = torch.arange(c, device=q.device)[:, None] + torch.arange(r, device=q.device)
    in_window = weights[..., torch.arange(c, device=q.device)[:, None], slots]  # key = query + j
    return out, in_window.flatten(2, 3)[:, :, :T]


class RestrictedSelfAttention(nn.Module):
    """Multi-head self-attention with each query restricted to its r neighbours (§4).

    The same parameters as the course's MultiHeadAttention (w_q, w_k, w_v, w_o), so the state
    of one loads into the other: with r >= 2T - 1 the two compute the same function."""

    def __init__(self, d_model: int, num_heads: int, r: int):
        super().__init__()
        check_heads(d_model, num_heads)
        check_width("r", r)
        self.d_model, self.num_heads, self.r = d_model, num_heads, r
        self.w_q, self.w_k = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.w_v, self.w_o = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor):
        """x (B, T, d_model) -> (out (B, T, d_model), weights (B, H, T, r))."""
        check_rank("x", x, 3, "(B, T, d_model)")
        check_size("x", x, -1, self.d_model, "feature size")
        q, k, v = (split_heads(w(x), self.num_heads) for w in (self.w_q, self.w_k, self.w_v))
        out, weights = restricted_attention(q, k, v, self.r)
        return self.w_o(merge_heads(out)), weights


__all__ = ["Convolution", "DepthwiseConvolution", "RestrictedSelfAttention", "SeparableConvolution",
           "band_mask", "block_band_mask", "check_width", "restricted_attention", "windows"]
