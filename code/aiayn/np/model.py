"""The encoder-decoder Transformer (§3, Figure 1), NumPy."""

import numpy as np

from .._checks import check_same
from ..config import TransformerConfig
from .decoder import Decoder
from .embeddings import LearnedPositionalEncoding, SinusoidalPositionalEncoding, TokenEmbedding
from .encoder import Encoder
from .masks import padding_mask, target_mask
from .nn import Dropout, Linear, Module
from .rotary import RotaryPositions


class Transformer(Module):
    """Embeddings -> encoder stack -> decoder stack -> pre-softmax projection (logits)."""

    def __init__(self, config: TransformerConfig):
        c = self.config = config
        self.src_embed = TokenEmbedding(c.src_vocab_size, c.d_model)
        # §3.4: one matrix for both embeddings (joint vocabulary) ...
        self.tgt_embed = (self.src_embed if c.share_embeddings
                          else TokenEmbedding(c.tgt_vocab_size, c.d_model))
        positional = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEncoding,
                      "rotary": RotaryPositions}[c.positional]  # rotary: attention rotates q and k instead
        self.pos = positional(c.d_model, c.max_len)
        self.dropout = Dropout(c.dropout)  # on embeddings + positions (§5.4)
        self.encoder = Encoder(c.num_layers, c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first,
                               c.d_k, c.d_v, options=c)
        self.decoder = Decoder(c.num_layers, c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first,
                               c.d_k, c.d_v, options=c)
        self.out_proj = Linear(c.d_model, c.tgt_vocab_size, bias=False)
        if c.tie_output:  # ... and the same one again as the pre-softmax projection
            self.out_proj.weight = self.tgt_embed.weight

    def encode(self, src: np.ndarray, src_mask: np.ndarray | None = None) -> np.ndarray:
        """src (B, T_src) ids -> memory (B, T_src, d_model)."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        return self.encoder(self.dropout(self.pos(self.src_embed(src))), src_mask)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None) -> np.ndarray:
        """tgt (B, T_tgt) ids, memory (B, T_src, d_model) -> hidden states (B, T_tgt, d_model)."""
        if tgt_mask is None:
            tgt_mask = target_mask(tgt, self.config.pad_id)
        return self.decoder(self.dropout(self.pos(self.tgt_embed(tgt))), memory, src_mask, tgt_mask)

    def forward(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Teacher forcing: logits (B, T_tgt, tgt_vocab_size) for every target position."""
        check_same("src", src, 0, "tgt", tgt, 0, "the batch size B")
        src_mask = padding_mask(src, self.config.pad_id)
        return self.out_proj(self.decode(tgt, self.encode(src, src_mask), src_mask))

    def backward(self, grad_logits: np.ndarray) -> None:
        """dL/dlogits (B, T_tgt, tgt_vocab_size) -> the gradient of every parameter, read with
        ``gradients()``: the forward pass undone step by step, last step first. The decoder
        returns the gradient of the encoder's output too, and that is where the encoder starts."""
        grad = self.out_proj.backward(grad_logits)
        grad, grad_memory = self.decoder.backward(grad)
        self.tgt_embed.backward(self.pos.backward(self.dropout.backward(grad)))
        grad = self.encoder.backward(grad_memory)
        self.src_embed.backward(self.pos.backward(self.dropout.backward(grad)))
