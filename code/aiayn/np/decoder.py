"""Decoder layer and decoder stack (§3.1), NumPy."""

from .._checks import check_dropout, check_positive, check_rank, check_same
from .backprop import residual_backward
from .encoder import residual
from .nn import Dropout, Module
from .variants import make_attention, make_feed_forward, make_norm


class DecoderLayer(Module):
    """Masked self-attention, encoder-decoder (cross) attention, then the feed-forward network."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.1,
                 norm_first: bool = False, d_k: int | None = None, d_v: int | None = None, options=None):
        """``options``: as for ``EncoderLayer``; rotary positions rotate self-attention only."""
        self.self_attn = make_attention(options, d_model, num_heads, d_k, d_v)
        self.cross_attn = make_attention(options, d_model, num_heads, d_k, d_v, self_attention=False)
        self.ffn = make_feed_forward(options, d_model, d_ff)
        self.norm1 = make_norm(options, d_model)
        self.norm2 = make_norm(options, d_model)
        self.norm3 = make_norm(options, d_model)
        self.dropout = Dropout(dropout)  # one module, called after all three sub-layers
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

    def backward(self, grad):
        """dL/d(output) -> (dL/dx, dL/dmemory): the three sub-layers in reverse order. Memory
        served as both keys and values of the cross-attention: its gradient is their sum."""
        grad = residual_backward(grad, self.ffn.backward, self.norm3, self.dropout, self.norm_first)
        from_memory = []

        def cross_attn_backward(g):
            grad_query, grad_key, grad_value = self.cross_attn.backward(g)
            from_memory.append(grad_key + grad_value)
            return grad_query

        grad = residual_backward(grad, cross_attn_backward, self.norm2, self.dropout, self.norm_first)
        grad = residual_backward(grad, lambda g: sum(self.self_attn.backward(g)),
                                 self.norm1, self.dropout, self.norm_first)
        return grad, from_memory[0]


class Decoder(Module):
    """N identical layers, plus a final LayerNorm under Pre-LN (see ``Encoder``)."""

    def __init__(self, num_layers: int, d_model: int, num_heads: int, d_ff: int,
                 dropout: float = 0.1, norm_first: bool = False, d_k: int | None = None,
                 d_v: int | None = None, options=None):
        check_positive("num_layers", num_layers)
        check_dropout(dropout)
        self.layers = [DecoderLayer(d_model, num_heads, d_ff, dropout, norm_first, d_k, d_v, options)
                       for _ in range(num_layers)]
        self.norm = make_norm(options, d_model) if norm_first else None

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        check_rank("x", x, 3, "(B, T_tgt, d_model)")
        check_rank("memory", memory, 3, "(B, T_src, d_model)")
        check_same("x", x, 0, "memory", memory, 0, "the batch size B")
        check_same("x", x, 2, "memory", memory, 2, "d_model")
        for layer in self.layers:
            x = layer(x, memory, src_mask, tgt_mask)
        return x if self.norm is None else self.norm(x)

    def backward(self, grad):
        """dL/d(output) -> (dL/dx, dL/dmemory). Every layer read the same memory, so its
        gradient is the sum over the layers."""
        if self.norm is not None:
            grad = self.norm.backward(grad)
        grad_memory = 0.0
        for layer in reversed(self.layers):
            grad, from_layer = layer.backward(grad)
            grad_memory = grad_memory + from_layer
        return grad, grad_memory
