"""Token embeddings (§3.4) and positional encodings (§3.5), PyTorch."""

import math

import torch
from torch import nn

from .._checks import check_positive, check_rank, check_size, check_tokens


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), PE(pos, 2i+1) = cos(same); (max_len, d_model)."""
    check_positive("max_len", max_len)
    check_positive("d_model", d_model)
    if d_model % 2:
        raise ValueError(f"d_model={d_model} must be even: sin and cos fill dimensions in pairs")
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]
    freq = torch.exp(-math.log(10000.0) * torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


class TokenEmbedding(nn.Module):
    """Looks ids up and multiplies by sqrt(d_model) (§3.4).

    Initialised with std d_model^-1/2, so the scaled embedding has unit variance, the same
    order of magnitude as the positional encoding's entries (RMS 1/sqrt 2); see the embeddings chapter."""

    def __init__(self, vocab_size: int, d_model: int):
        super().__init__()
        check_positive("vocab_size", vocab_size)
        check_positive("d_model", d_model)
        self.weight = nn.Parameter(torch.randn(vocab_size, d_model) * d_model ** -0.5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        vocab_size, d_model = self.weight.shape
        is_int = not tokens.is_floating_point() and not tokens.is_complex() and tokens.dtype != torch.bool
        # The range check costs one reduction; a silent out-of-range gather on GPU costs a day.
        # (A meta tensor has no values to check: shape tracing on the meta device skips it.)
        # Under torch.compile the check would split the graph in two and wait for the GPU; the
        # Trainer checks each batch on the host before it is moved there instead.
        has_values = (is_int and tokens.numel() and tokens.device.type != "meta"
                      and not torch.compiler.is_compiling())
        # One reduction and one read for both ends: on a GPU each read of a value makes the host
        # wait until the GPU has caught up.
        lo, hi = torch.stack(torch.aminmax(tokens)).tolist() if has_values else (0, 0)
        check_tokens("tokens", tokens, is_int, lo, hi, vocab_size)
        if tokens.dtype not in (torch.int64, torch.int32):  # indexing reads uint8 as a mask, rejects int16
            tokens = tokens.long()
        return self.weight[tokens] * math.sqrt(d_model)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to ``x`` of shape (B, T, d_model); no parameters."""

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        # A buffer follows .to(device); persistent=False keeps it out of state_dict, as in the
        # NumPy twin, where it is the private attribute ``_table``. Kept in float64 and cast in
        # forward, so a float64 model gets the exact table, not an upcast float32 one.
        self.register_buffer("_table", sinusoidal_table(max_len, d_model), persistent=False)

    @property
    def table(self) -> torch.Tensor:
        """(max_len, d_model): row p is the encoding of position p (read-only; incremental
        decoding adds the row of the position a new token stands at)."""
        return self._table

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + _positions(self._table, x)


class LearnedPositionalEncoding(nn.Module):
    """The alternative the paper compared (Table 3, row E): one learned vector per position."""

    def __init__(self, d_model: int, max_len: int = 5000):
        super().__init__()
        check_positive("max_len", max_len)
        self.weight = nn.Parameter(torch.randn(max_len, d_model) * 0.02)

    @property
    def table(self) -> torch.Tensor:
        """(max_len, d_model): row p is the learned vector of position p (the parameter itself)."""
        return self.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + _positions(self.weight, x)


def _positions(table: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    check_rank("x", x, 3, "(B, T, d_model)")
    check_size("x", x, -1, table.shape[1], "feature size")
    if x.shape[1] > table.shape[0]:
        raise ValueError(f"x has {x.shape[1]} positions (shape {tuple(x.shape)}) but the "
                         f"positional table only covers max_len={table.shape[0]}")
    return table[: x.shape[1]].to(x.dtype)
