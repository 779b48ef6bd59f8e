"""Encoder layer and encoder stack (§3.1), PyTorch."""

import torch
from torch import nn

from .._checks import check_dropout, check_positive, check_rank
from .variants import make_attention, make_feed_forward, make_norm


def residual(x, sublayer, norm, dropout, norm_first: bool):
    """Post-LN (the paper): LayerNorm(x + Dropout(Sublayer(x))).
    Pre-LN (norm_first):     x + Dropout(Sublayer(LayerNorm(x)))."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class EncoderLayer(nn.Module):
    """Self-attention, then the feed-forward network, each wrapped by ``residual``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, d_k: int | None = None, d_v: int | None = None, options=None):
        """``options``: a ``TransformerConfig`` whose choices after the paper (``norm``, ``ffn``,
        ``num_kv_heads``, rotary positions, ``key_block``) the parts follow; None: the paper's."""
        super().__init__()
        self.self_attn = make_attention(options, d_model, num_heads, d_k, d_v)
        self.ffn = make_feed_forward(options, d_model, d_ff)
        self.norm1 = make_norm(options, d_model)
        self.norm2 = make_norm(options, d_model)
        self.dropout = nn.Dropout(dropout)  # residual dropout, P_drop (§5.4)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        """x: (B, T, d_model); mask: source padding mask (B, 1, 1, T) or None."""
        x = residual(x, lambda h: self.self_attn(h, h, h, mask)[0],
                     self.norm1, self.dropout, self.norm_first)
        return residual(x, self.ffn, self.norm2, self.dropout, self.norm_first)


class Encoder(nn.Module):
    """N identical layers. Pre-LN leaves the last residual stream un-normalised, so it adds
    one final LayerNorm; Post-LN already ends in one and adds nothing."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.1, norm_first: bool = False, d_k: int | None = None,
                 d_v: int | None = None, options=None):
        super().__init__()
        check_positive("num_layers", num_layers)
        check_dropout(dropout)
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, d_k, d_v, options) for _ in range(num_layers))
        self.norm = make_norm(options, d_model) if norm_first else None

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        check_rank("x", x, 3, "(B, T, d_model)")
        for layer in self.layers:
            x = layer(x, mask)
        return x if self.norm is None else self.norm(x)
