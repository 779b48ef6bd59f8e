"""Build a Transformer from scratch, stage by stage, in this one file (PyTorch).

Replace each `raise NotImplementedError` with your code, top to bottom, and check each stage
as you finish it (from the repository root):

    python -m aiayn.grading from_scratch/attention            # stage 1
    python -m aiayn.grading from_scratch/multi_head_attention # stage 2
    python -m aiayn.grading from_scratch/masks                # stage 3
    python -m aiayn.grading from_scratch/positional_encoding  # stage 4
    python -m aiayn.grading from_scratch/encoder_layer        # stage 5
    python -m aiayn.grading from_scratch/decoder_layer        # stage 6
    python -m aiayn.grading from_scratch/transformer          # stage 7
    python -m aiayn.grading from_scratch/greedy_decode        # stage 8
    python -m aiayn.grading from_scratch                      # all of them

Conventions: activations (B, T, d_model); heads (B, H, T, d_k); token ids (B, T) int64.
Masks are boolean, broadcastable to (B, H, T_q, T_k); True = "this query may attend to this
key". The graders copy the course's weights into your modules by name, so keep the attribute
names given in the docstrings (w_q, norm1, ...): they are the state_dict keys.
Use torch and torch.nn building blocks (nn.Linear, nn.Embedding, nn.Dropout, nn.ModuleList),
but not nn.MultiheadAttention, nn.LayerNorm, nn.Transformer* or F.scaled_dot_product_attention:
writing those is the exercise.
"""

import math

import torch
from torch import nn


# Stage 1: scaled dot-product attention (§3.2.1) --------------------------------------------
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v.

    q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v); mask None or bool,
    broadcastable to (B, H, T_q, T_k), True = may attend.
    Returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)). A query whose keys are all
    masked gets zero weights and a zero output: no NaN, forward or backward.
    """
    raise NotImplementedError("stage 1")


# Stage 2: multi-head attention (§3.2.2) ----------------------------------------------------
class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, all heads in one batched matmul.

    Attributes: w_q, w_k, w_v, w_o, each nn.Linear(d_model, d_model) with a bias.
    forward(query (B, T_q, d_model), key (B, T_k, d_model), value (B, T_k, d_model), mask)
    returns (output (B, T_q, d_model), weights (B, H, T_q, T_k)). No loop over heads.
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError("stage 2")

    def forward(self, query, key, value, mask=None):
        raise NotImplementedError("stage 2")


# Stage 3: masks ----------------------------------------------------------------------------
def padding_mask(tokens, pad_id):
    """(B, T) token ids -> bool (B, 1, 1, T): False at padding keys, True elsewhere."""
    raise NotImplementedError("stage 3")


def causal_mask(size):
    """bool (1, 1, size, size): position i may attend to positions j <= i (itself included)."""
    raise NotImplementedError("stage 3")


def target_mask(tokens, pad_id):
    """Decoder self-attention mask: padding AND causal, bool (B, 1, T, T)."""
    raise NotImplementedError("stage 3")


# Stage 4: sinusoidal positional encoding (§3.5) --------------------------------------------
def positional_encoding(max_len, d_model):
    """Float tensor (max_len, d_model): PE[pos, 2i] = sin(pos / 10000^(2i / d_model)),
    PE[pos, 2i + 1] = cos(pos / 10000^(2i / d_model)). d_model is even."""
    raise NotImplementedError("stage 4")


# Stage 5: LayerNorm, feed-forward network, encoder layer (§3.1, §3.3) -----------------------
class LayerNorm(nn.Module):
    """(x - mean) / sqrt(var + eps) * weight + bias over the last axis, as nn.LayerNorm.

    Attributes: eps; weight (ones) and bias (zeros), nn.Parameter of shape (d_model,)."""

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x):
        raise NotImplementedError("stage 5")


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3), applied at every position.

    Attributes: w_1 = nn.Linear(d_model, d_ff), w_2 = nn.Linear(d_ff, d_model)."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x):
        raise NotImplementedError("stage 5")


class EncoderLayer(nn.Module):
    """Self-attention, then the FFN, each as x = LayerNorm(x + Dropout(Sublayer(x))) (Post-LN,
    the paper's order).

    Attributes: self_attn (MultiHeadAttention), ffn (FeedForward), norm1, norm2 (LayerNorm),
    dropout (nn.Dropout). forward(x (B, T, d_model), mask (B, 1, 1, T) or None) -> (B, T, d_model).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x, mask=None):
        raise NotImplementedError("stage 5")


# Stage 6: decoder layer ----------------------------------------------------------------------
class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, then the FFN; each
    sub-layer Post-LN as in the encoder.

    Attributes: self_attn, cross_attn (MultiHeadAttention), ffn (FeedForward),
    norm1, norm2, norm3 (LayerNorm), dropout (nn.Dropout).
    forward(x (B, T_tgt, d_model), memory (B, T_src, d_model), src_mask (B, 1, 1, T_src),
    tgt_mask (B, 1, T_tgt, T_tgt)) -> (B, T_tgt, d_model).
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        raise NotImplementedError("stage 6")

    def forward(self, x, memory, src_mask=None, tgt_mask=None):
        raise NotImplementedError("stage 6")


# Stage 7: the encoder-decoder model (§3, Figure 1) ------------------------------------------
class Transformer(nn.Module):
    """Embeddings (times sqrt(d_model)) + positional encoding -> N encoder layers; the same for
    the target -> N decoder layers -> a linear map to target-vocabulary logits.

    Attributes: src_embed, tgt_embed (nn.Embedding(vocab, d_model)); encoder, decoder
    (nn.ModuleList of N EncoderLayer / DecoderLayer); out_proj (nn.Linear(d_model, tgt_vocab,
    bias=False)) whose weight IS tgt_embed.weight (§3.4); dropout on the embeddings; pad_id.
    Methods:
      encode(src (B, T_src), src_mask=None) -> memory (B, T_src, d_model)
      decode(tgt (B, T_tgt), memory, src_mask=None, tgt_mask=None) -> (B, T_tgt, d_model)
      forward(src, tgt) -> logits (B, T_tgt, tgt_vocab)
    Masks left as None are built from the ids: padding_mask(src), target_mask(tgt).
    """

    def __init__(self, src_vocab, tgt_vocab, d_model=512, num_heads=8, num_layers=6,
                 d_ff=2048, dropout=0.1, max_len=512, pad_id=0):
        super().__init__()
        raise NotImplementedError("stage 7")

    def encode(self, src, src_mask=None):
        raise NotImplementedError("stage 7")

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        raise NotImplementedError("stage 7")

    def forward(self, src, tgt):
        raise NotImplementedError("stage 7")


# Stage 8: greedy decoding --------------------------------------------------------------------
@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    """Translate src (B, T_src) one token at a time, always taking the most probable next token.

    Returns int64 ids (B, 1 + steps): column 0 is bos_id; a row that has produced eos_id gets
    model.pad_id from then on; stop after max_len steps or when every row has produced eos_id.
    Use only model.encode, model.decode, model.out_proj and model.pad_id (the grader runs your
    function on the course's model too). Run the encoder once, not once per step.
    """
    raise NotImplementedError("stage 8")
