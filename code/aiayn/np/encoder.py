"""Encoder layer and encoder stack (§3.1), NumPy."""

import numpy as np

from .._checks import check_dropout, check_positive, check_rank
from .backprop import residual_backward
from .nn import Dropout, Module
from .variants import make_attention, make_feed_forward, make_norm


def residual(x, sublayer, norm, dropout, norm_first: bool):
    """Post-LN (the paper): LayerNorm(x + Dropout(Sublayer(x))).
    Pre-LN (norm_first):     x + Dropout(Sublayer(LayerNorm(x)))."""
    if norm_first:
        return x + dropout(sublayer(norm(x)))
    return norm(x + dropout(sublayer(x)))


class EncoderLayer(Module):
    """Self-attention, then the feed-forward network, each wrapped by ``residual``."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, d_k: int | None = None, d_v: int | None = None, options=None):
        """``options``: a ``TransformerConfig`` whose choices after the paper (``norm``, ``ffn``,
        ``num_kv_heads``, rotary positions, ``key_block``) the parts follow; None: the paper's."""
        self.self_attn = make_attention(options, d_model, num_heads, d_k, d_v)
        self.ffn = make_feed_forward(options, d_model, d_ff)
        self.norm1 = make_norm(options, d_model)
        self.norm2 = make_norm(options, d_model)
        self.dropout = Dropout(dropout)  # one module, called after both sub-layers
        self.norm_first = norm_first

    def forward(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """x: (B, T, d_model); mask: source padding mask (B, 1, 1, T) or None."""
        x = residual(x, lambda h: self.self_attn(h, h, h, mask)[0],
                     self.norm1, self.dropout, self.norm_first)
        return residual(x, self.ffn, self.norm2, self.dropout, self.norm_first)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/d(output) -> dL/dx: the two sub-layers in reverse order. Self-attention read x as
        query, key and value, so x's gradient is the sum of the three."""
        grad = residual_backward(grad, self.ffn.backward, self.norm2, self.dropout, self.norm_first)
        return residual_backward(grad, lambda g: sum(self.self_attn.backward(g)),
                                 self.norm1, self.dropout, self.norm_first)


class Encoder(Module):
    """N identical layers. Pre-LN leaves the last residual stream un-normalised, so it adds
    one final LayerNorm; Post-LN already ends in one and adds nothing."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.1, norm_first: bool = False, d_k: int | None = None,
                 d_v: int | None = None, options=None):
        check_positive("num_layers", num_layers)
        check_dropout(dropout)
        self.layers = [EncoderLayer(d_model, num_heads, d_ff, dropout, norm_first, d_k, d_v, options)
                       for _ in range(num_layers)]
        self.norm = make_norm(options, d_model) if norm_first else None

    def forward(self, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        check_rank("x", x, 3, "(B, T, d_model)")
        for layer in self.layers:
            x = layer(x, mask)
        return x if self.norm is None else self.norm(x)

    def backward(self, grad: np.ndarray) -> np.ndarray:
        """dL/d(output) -> dL/dx, through the final LayerNorm (Pre-LN) and the layers, top first."""
        if self.norm is not None:
            grad = self.norm.backward(grad)
        for layer in reversed(self.layers):
            grad = layer.backward(grad)
        return grad
