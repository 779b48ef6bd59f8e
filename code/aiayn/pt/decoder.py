"""Decoder layer and decoder stack (§3.1), PyTorch."""

from torch import nn

from .._checks import check_dropout, check_positive, check_rank, check_same
from .encoder import residual
from .variants import make_attention, make_feed_forward, make_norm


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention, then the feed-forward network."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, d_k: int | None = None, d_v: int | None = None, options=None):
        """``options``: as for ``EncoderLayer``; rotary positions rotate self-attention only."""
        super().__init__()
        self.self_attn = make_attention(options, d_model, num_heads, d_k, d_v)
        self.cross_attn = make_attention(options, d_model, num_heads, d_k, d_v, self_attention=False)
        self.ffn = make_feed_forward(options, d_model, d_ff)
        self.norm1 = make_norm(options, d_model)
        self.norm2 = make_norm(options, d_model)
        self.norm3 = make_norm(options, d_model)
        self.dropout = nn.Dropout(dropout)  # residual dropout, P_drop (§5.4)
        self.norm_first = norm_first

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        """x: (B, T_tgt, d_model); memory: encoder output (B, T_src, d_model);
        src_mask: (B, 1, 1, T_src); tgt_mask: (B, 1, T_tgt, T_tgt), padding AND causal."""
        x = residual(x, lambda h: self.self_attn(h, h, h, tgt_mask)[0],
                     self.norm1, self.dropout, self.norm_first)
        # Queries come from the decoder, keys and values from the encoder's output.
        x = residual(x, lambda h: self.cross_attn(h, memory, memory, src_mask)[0],
                     self.norm2, self.dropout, self.norm_first)
        return residual(x, self.ffn, self.norm3, self.dropout, self.norm_first)


class Decoder(nn.Module):
    """N identical layers, plus a final LayerNorm under Pre-LN (see ``Encoder``)."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.1, norm_first: bool = False, d_k: int | None = None,
                 d_v: int | None = None, options=None):
        super().__init__()
        check_positive("num_layers", num_layers)
        check_dropout(dropout)
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, d_k, d_v, options) for _ in range(num_layers))
        self.norm = make_norm(options, d_model) if norm_first else None

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        check_rank("x", x, 3, "(B, T_tgt, d_model)")
        check_rank("memory", memory, 3, "(B, T_src, d_model)")
        check_same("x", x, 0, "memory", memory, 0, "the batch size B")
        check_same("x", x, 2, "memory", memory, 2, "d_model")
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return x if self.norm is None else self.norm(x)
