"""The decoder-only Transformer (GPT's shape), NumPy: one stack reads source and target as one
sequence under a causal mask.

The paper's model encodes the source with full attention and decodes the target with masked
self-attention plus encoder-decoder attention. A decoder-only model writes both into one
sequence, the source's tokens then the target's, and runs a single stack of the course's own
``EncoderLayer`` (self-attention and the feed-forward network, no encoder-decoder attention)
under a causal mask: the source is read left to right like the target, and each target token
sees the whole source and the target before it. It predicts the target's tokens only, so it
trains with the same loss and ``Trainer`` as the encoder-decoder.

At equal depth it has fewer parameters (no encoder-decoder attention): 2N layers with
``d_ff + d_model`` match the encoder-decoder's N + N layers (after_decoder_only measures both).
"""

import numpy as np

from .._checks import check_rank, check_same
from ..config import TransformerConfig
from .embeddings import LearnedPositionalEncoding, SinusoidalPositionalEncoding, TokenEmbedding
from .encoder import Encoder
from .masks import target_mask
from .nn import Dropout, Linear, Module
from .rotary import RotaryPositions


class DecoderOnlyTransformer(Module):
    """One embedding -> a stack of ``num_layers`` self-attention layers, causal -> logits.
    ``config``: a ``TransformerConfig`` with one vocabulary (``src_vocab_size == tgt_vocab_size``);
    its later choices (norm, ffn, num_kv_heads, rotary, key_block) apply as in ``Transformer``."""

    def __init__(self, config: TransformerConfig):
        c = self.config = config
        if c.src_vocab_size != c.tgt_vocab_size:
            raise ValueError(f"a decoder-only model reads source and target with one vocabulary: got "
                             f"src_vocab_size={c.src_vocab_size} and tgt_vocab_size={c.tgt_vocab_size}")
        self.embed = TokenEmbedding(c.tgt_vocab_size, c.d_model)
        positional = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEncoding,
                      "rotary": RotaryPositions}[c.positional]
        self.pos = positional(c.d_model, c.max_len)
        self.dropout = Dropout(c.dropout)
        # The decoder of a decoder-only model is a stack of encoder layers under a causal mask.
        self.decoder = Encoder(c.num_layers, c.d_model, c.num_heads, c.d_ff, c.dropout, c.norm_first,
                               c.d_k, c.d_v, options=c)
        self.out_proj = Linear(c.d_model, c.tgt_vocab_size, bias=False)
        if c.tie_output:
            self.out_proj.weight = self.embed.weight

    def pack(self, src: np.ndarray, tgt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """src (B, S) right-padded, tgt (B, T) -> (one sequence per row (B, S + T): the source's
        tokens, the target's, then padding; where (B, T): the target's positions in it)."""
        check_rank("src", src, 2, "(B, S) token ids")
        check_rank("tgt", tgt, 2, "(B, T) token ids")
        check_same("src", src, 0, "tgt", tgt, 0, "the batch size B")
        real = src != self.config.pad_id
        if bool((real[:, 1:] & ~real[:, :-1]).any()):
            raise ValueError(f"src {tuple(src.shape)} must be right-padded: a token follows padding")
        where = real.sum(axis=1, keepdims=True) + np.arange(tgt.shape[1])
        seq = np.concatenate([src, np.full_like(tgt, self.config.pad_id)], axis=1)
        np.put_along_axis(seq, where, tgt, axis=1)
        return seq, where

    def encode(self, src: np.ndarray, src_mask: np.ndarray | None = None) -> np.ndarray:
        """There is no encoder: the "memory" the decoding functions pass to ``decode`` is the
        source itself, (B, S) ids, read again with the target at every call."""
        return src

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None) -> np.ndarray:
        """tgt (B, T) ids, memory: the source ids (B, S) -> hidden states (B, T, d_model) at the
        target's positions. The mask is made from the packed sequence (padding and causal);
        ``src_mask`` and ``tgt_mask``, which the decoding functions pass, are not used."""
        seq, where = self.pack(memory, tgt)
        hidden = self.decoder(self.dropout(self.pos(self.embed(seq))), target_mask(seq, self.config.pad_id))
        self.save_for_backward(where, hidden.shape)
        return np.take_along_axis(hidden, where[..., None], axis=1)

    def forward(self, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
        """Teacher forcing: logits (B, T_tgt, vocab) for every target position."""
        return self.out_proj(self.decode(tgt, self.encode(src)))

    def backward(self, grad_logits: np.ndarray) -> None:
        """dL/dlogits (B, T, vocab) -> every parameter's gradient (``gradients()``): the target
        positions' gradients are put back in their places of the sequence, zeros elsewhere (the
        source's positions predicted nothing), then the stack and the embedding undo themselves."""
        grad = self.out_proj.backward(grad_logits)
        where, shape = self.saved()
        full = np.zeros(shape)
        np.put_along_axis(full, where[..., None], grad, axis=1)
        grad = self.decoder.backward(full)
        self.embed.backward(self.pos.backward(self.dropout.backward(grad)))
