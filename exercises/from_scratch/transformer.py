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
key". The graders copy the course's weights into your modules by name: the attribute names
that the docstrings promise (w_q, norm1, ...) are the state_dict keys. Build with torch and
torch.nn building blocks (nn.Linear, nn.Embedding, nn.Dropout, nn.ModuleList): writing
attention, LayerNorm and the model is the exercise, and each docstring promises which library
version it does without (F.scaled_dot_product_attention, nn.MultiheadAttention, nn.LayerNorm,
nn.Transformer*). Every docstring's Promises are what the graders check.
"""

import math

import torch
from torch import nn


# Stage 1: scaled dot-product attention (§3.2.1) --------------------------------------------
def scaled_dot_product_attention(q, k, v, mask=None):
    """softmax(q k^T / sqrt(d_k)) v.

    q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v); mask None or bool,
    broadcastable to (B, H, T_q, T_k), True = may attend.

    Promises (the grader checks each one):
      - shapes: returns (output (B, H, T_q, d_v), weights (B, H, T_q, T_k)).
      - value: weights = softmax(q k^T / sqrt(d_k)) over the keys (the last axis), output =
        weights @ v.
      - mask: masked keys get exactly zero weight (True = may attend).
      - all-masked: a query whose keys are all masked gets zero weights and a zero output: no
        NaN, forward or backward.
      - own-attention: written here: not F.scaled_dot_product_attention.
    """
    raise NotImplementedError("stage 1")


# Stage 2: multi-head attention (§3.2.2) ----------------------------------------------------
class MultiHeadAttention(nn.Module):
    """MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O, all heads in one batched matmul.

    forward(query (B, T_q, d_model), key (B, T_k, d_model), value (B, T_k, d_model), mask)
    returns (output (B, T_q, d_model), weights (B, H, T_q, T_k)).

    Promises (the grader checks each one):
      - attributes: w_q, w_k, w_v, w_o, each nn.Linear(d_model, d_model) with a bias.
      - value: the output and the weights of the course's multi-head attention with the same
        weights, for self-attention and for cross-attention (keys and values from another
        sequence, T_k != T_q); gradients reach all four projections.
      - mask: the mask reaches the attention (True = may attend).
      - no-head-loop: all heads at once: no Python loop over the heads.
      - own-attention: written here: not nn.MultiheadAttention.
    """

    def __init__(self, d_model, num_heads):
        super().__init__()
        raise NotImplementedError("stage 2")

    def forward(self, query, key, value, mask=None):
        raise NotImplementedError("stage 2")


# Stage 3: masks ----------------------------------------------------------------------------
def padding_mask(tokens, pad_id):
    """(B, T) token ids -> the mask of the keys that are not padding.

    Promises (the grader checks each one):
      - mask: a bool tensor (B, 1, 1, T), False exactly where tokens == pad_id.
    """
    raise NotImplementedError("stage 3")


def causal_mask(size):
    """The decoder's mask of the future.

    Promises (the grader checks each one):
      - mask: a bool tensor (1, 1, size, size), True where j <= i: position i attends to
        itself and to the positions before it, to none after it.
    """
    raise NotImplementedError("stage 3")


def target_mask(tokens, pad_id):
    """Decoder self-attention mask.

    Promises (the grader checks each one):
      - mask: padding AND causal, a bool tensor (B, 1, T, T).
    """
    raise NotImplementedError("stage 3")


# Stage 4: sinusoidal positional encoding (§3.5) --------------------------------------------
def positional_encoding(max_len, d_model):
    """The sinusoidal table of §3.5; d_model is even.

    Promises (the grader checks each one):
      - shape: a floating-point tensor of shape (max_len, d_model).
      - value: PE[pos, 2i] = sin(pos / 10000^(2i / d_model)), PE[pos, 2i + 1] =
        cos(pos / 10000^(2i / d_model)).
    """
    raise NotImplementedError("stage 4")


# Stage 5: LayerNorm, feed-forward network, encoder layer (§3.1, §3.3) -----------------------
class LayerNorm(nn.Module):
    """Layer normalisation over the last axis, as nn.LayerNorm computes it.

    Promises (the grader checks each one):
      - attributes: eps (default 1e-5); weight (ones) and bias (zeros), each an nn.Parameter
        of shape (d_model,).
      - value: (x - mean) / sqrt(var + eps) * weight + bias, mean and (biased) variance over
        the last axis.
      - own-norm: written here: not nn.LayerNorm.
    """

    def __init__(self, d_model, eps=1e-5):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x):
        raise NotImplementedError("stage 5")


class FeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (§3.3), applied at every position.

    Promises (the grader checks each one):
      - value: attributes w_1 = nn.Linear(d_model, d_ff) and w_2 = nn.Linear(d_ff, d_model);
        forward(x) = w_2(relu(w_1(x))).
    """

    def __init__(self, d_model, d_ff):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x):
        raise NotImplementedError("stage 5")


class EncoderLayer(nn.Module):
    """Self-attention, then the FFN (Post-LN, the paper's order).

    forward(x (B, T, d_model), mask (B, 1, 1, T) or None) -> (B, T, d_model).

    Promises (the grader checks each one):
      - attributes: self_attn (MultiHeadAttention), ffn (FeedForward), norm1, norm2
        (LayerNorm), dropout (nn.Dropout): the course's parameter names.
      - post-ln: each sub-layer as x = LayerNorm(x + Dropout(Sublayer(x))), the mask passed to
        the self-attention.
      - dropout: dropout acts in train mode, and not in eval mode.
    """

    def __init__(self, d_model, num_heads, d_ff, dropout=0.1):
        super().__init__()
        raise NotImplementedError("stage 5")

    def forward(self, x, mask=None):
        raise NotImplementedError("stage 5")


# Stage 6: decoder layer ----------------------------------------------------------------------
class DecoderLayer(nn.Module):
    """Masked self-attention, cross-attention over the encoder output, then the FFN.

    forward(x (B, T_tgt, d_model), memory (B, T_src, d_model), src_mask (B, 1, 1, T_src),
    tgt_mask (B, 1, T_tgt, T_tgt)) -> (B, T_tgt, d_model).

    Promises (the grader checks each one):
      - attributes: self_attn, cross_attn (MultiHeadAttention), ffn (FeedForward), norm1,
        norm2, norm3 (LayerNorm), dropout (nn.Dropout): the course's parameter names.
      - cross: the cross-attention's queries come from the decoder, its keys and values from
        memory, the encoder output.
      - post-ln: each sub-layer Post-LN as in the encoder; tgt_mask reaches the self-attention
        (a later target position changes no earlier output), src_mask the cross-attention.
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

    Methods:
      encode(src (B, T_src), src_mask=None) -> memory (B, T_src, d_model)
      decode(tgt (B, T_tgt), memory, src_mask=None, tgt_mask=None) -> (B, T_tgt, d_model)
      forward(src, tgt) -> logits (B, T_tgt, tgt_vocab)

    Promises (the grader checks each one):
      - attributes: src_embed, tgt_embed (nn.Embedding(vocab, d_model)); encoder, decoder
        (nn.ModuleList of N EncoderLayer / DecoderLayer); out_proj (nn.Linear(d_model,
        tgt_vocab, bias=False)) whose weight IS tgt_embed.weight (§3.4); pad_id.
      - encode: memory = the encoder layers over src_embed(src) * sqrt(d_model) plus the
        positional encoding, with padding_mask(src) when src_mask is None.
      - forward: logits = out_proj(decode(tgt, memory)), decode building target_mask(tgt)
        when tgt_mask is None: a later target token changes no earlier logit.
      - dropout: dropout on the embeddings (their sum with the positions) in train mode.
      - own-model: built from this file's classes: no nn.Transformer, nn.TransformerEncoder*
        or nn.TransformerDecoder*.
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

    Promises (the grader checks each one):
      - ids: returns int64 ids (B, 1 + steps) whose column 0 is bos_id.
      - last-position: each step appends the argmax of the logits at the LAST position, and
        feeds it back.
      - stops: a row that has produced eos_id gets model.pad_id from then on; decoding stops
        after max_len steps or when every row has produced eos_id.
      - encode-once: the encoder runs once, not once per step.
      - interface: model.encode, model.decode, model.out_proj and model.pad_id are all it
        uses (the grader runs it on the course's model too).
    """
    raise NotImplementedError("stage 8")
