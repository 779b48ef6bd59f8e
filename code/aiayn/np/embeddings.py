"""Token embeddings (§3.4) and positional encodings (§3.5), NumPy."""

import math

import numpy as np

from .._checks import check_positive, check_rank, check_size, check_tokens
from .nn import Module, normal


def sinusoidal_table(max_len: int, d_model: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same); (max_len, d_model)."""
    check_positive("max_len", max_len)
    check_positive("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model={d_model} must be even: sin and cos fill dimensions in pairs")
    pos = np.arange(max_len)[:, None]
    freq = np.exp(-math.log(10000.0) * np.arange(0, d_model, 2) / d_model)  # 1 / 10000^(2i/d)
    table = np.empty((max_len, d_model))
    table[:, 0::2] = np.sin(pos * freq)
    table[:, 1::2] = np.cos(pos * freq)
    return table


class TokenEmbedding(Module):
    """Looks ids up and multiplies by sqrt(d_model) (§3.4).

    Initialised with std d_model^-1/2, so the scaled embedding has unit variance, the same
    order of magnitude as the positional encoding's entries (RMS 1/sqrt 2); see the embeddings chapter."""

    def __init__(self, vocab_size: int, d_model: int):
        check_positive("vocab_size", vocab_size)
        check_positive("d_model", d_model)
        self.weight = normal(d_model ** -0.5, (vocab_size, d_model))

    def forward(self, tokens: np.ndarray) -> np.ndarray:
        vocab_size, d_model = self.weight.shape
        is_int = np.issubdtype(np.asarray(tokens).dtype, np.integer)
        lo, hi = (int(tokens.min()), int(tokens.max())) if is_int and tokens.size else (0, 0)
        check_tokens("tokens", tokens, is_int, lo, hi, vocab_size)
        self.save_for_backward(tokens)
        return self.weight[tokens] * math.sqrt(d_model)

    def backward(self, grad: np.ndarray) -> None:
        """dL/d(output) (B, T, d_model) -> the gradient of ``weight``: row v receives the sum of
        the gradients of every position that holds id v, times sqrt(d_model); rows of ids that
        do not occur receive 0. Token ids have no gradient: nothing is returned."""
        (tokens,) = self.saved()
        vocab_size, d_model = self.weight.shape
        grad_weight = np.zeros_like(self.weight)
        np.add.at(grad_weight, tokens.ravel(), grad.reshape(-1, d_model))  # repeated ids add up
        self.add_grad("weight", grad_weight * math.sqrt(d_model))


class SinusoidalPositionalEncoding(Module):
    """Adds the fixed sinusoidal table to ``x`` of shape (B, T, d_model); no parameters."""

    def __init__(self, d_model: int, max_len: int = 5000):
        self._table = sinusoidal_table(max_len, d_model)

    @property
    def table(self) -> np.ndarray:
        """(max_len, d_model): row p is the encoding of position p (read-only; incremental
        decoding adds the row of the position a new token stands at)."""
        return self._table

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x + _positions(self._table, x)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        return grad  # a constant was added: the gradient passes through unchanged


class LearnedPositionalEncoding(Module):
    """The alternative the paper compared (Table 3, row E): one learned vector per position."""

    def __init__(self, d_model: int, max_len: int = 5000):
        check_positive("max_len", max_len)
        self.weight = normal(0.02, (max_len, d_model))

    @property
    def table(self) -> np.ndarray:
        """(max_len, d_model): row p is the learned vector of position p (the parameter itself)."""
        return self.weight

    def forward(self, x: np.ndarray) -> np.ndarray:
        return x + _positions(self.weight, x)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """Position t's vector was added to every sentence: its gradient is the sum over the
        batch; positions beyond the sequence were not used and receive 0."""
        grad_weight = np.zeros_like(self.weight)
        grad_weight[: grad.shape[1]] = grad.sum(axis=0)
        self.add_grad("weight", grad_weight)
        return grad


def _positions(table: np.ndarray, x: np.ndarray) -> np.ndarray:
    check_rank("x", x, 3, "(B, T, d_model)")
    check_size("x", x, -1, table.shape[1], "feature size")
    if x.shape[1] > table.shape[0]:
        raise ValueError(f"x has {x.shape[1]} positions (shape {tuple(x.shape)}) but the "
                         f"positional table only covers max_len={table.shape[0]}")
    return table[: x.shape[1]]
