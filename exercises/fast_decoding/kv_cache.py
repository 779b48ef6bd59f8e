"""Exercise: greedy decoding with a key-value cache, for the course's Transformer (PyTorch).

Greedy decoding as the course first wrote it runs the decoder over the whole prefix at every
step. Here each step runs it on the newest token only: the keys and values of the earlier tokens
in decoder self-attention come from a cache, one position longer after every step, and the keys
and values of encoder-decoder attention are computed once per sentence. The model is
``aiayn.pt.model.Transformer``; use its sub-modules, as ``aiayn.pt.decoder.DecoderLayer`` does:
``layer.self_attn`` and ``layer.cross_attn`` (each with ``w_q``, ``w_k``, ``w_v``, ``w_o`` and
``num_heads``), ``layer.ffn``, ``layer.norm1..3``, ``layer.dropout``, ``layer.norm_first``.

Shapes: activations (B, T, d_model), heads (B, H, T, d_k); masks boolean, True = may attend.
The grader compares your hidden states with ``model.decode`` over the whole prefix at every step
(float64, 1e-10), on Post-LN and Pre-LN models whose heads have d_k != d_v; each function's
Promises say what else it checks.

Check your work:  python -m aiayn.grading fast_decoding/kv_cache
"""

import torch

from aiayn.pt.attention import merge_heads, scaled_dot_product_attention, split_heads
from aiayn.pt.encoder import residual
from aiayn.pt.masks import padding_mask


def start_cache(model, memory):
    """The cache before the first step. memory: the encoder output (B, S, d_model).

    Promises (the grader checks each one):
      - layout: a list with one dict per layer of ``model.decoder.layers``, each with the keys
        "self_k", "self_v", "cross_k" and "cross_v".
      - empty-self: "self_k" (B, H, 0, d_k) and "self_v" (B, H, 0, d_v) are empty: the decoder
        self-attention's keys and values, one position longer after every step.
      - cross: "cross_k" (B, H, S, d_k) and "cross_v" (B, H, S, d_v) are the encoder-decoder
        attention's keys and values, ``layer.cross_attn.w_k(memory)`` and ``w_v(memory)``
        split into heads (``split_heads``), computed here, once per sentence.
    """
    raise NotImplementedError


def decode_step(model, token, position, cache, src_mask):
    """The decoder for one new token. token: (B, 1) ids; position: the number of tokens before
    it (0 for BOS); cache: ``start_cache``'s list, after ``position`` steps; src_mask: the
    source padding mask (B, 1, 1, S).

    Promises (the grader checks each one):
      - shape: returns the hidden state of the new token, (B, 1, d_model).
      - hidden: that state is ``model.decode(ys, memory, src_mask)[:, -1:]`` for the prefix
        ``ys`` that ends with ``token``, at every step.
      - position: the token stands at ``position``: row ``position`` of the positional table.
      - appends: the new token's keys and values are appended to the cache: one position more
        per step, the encoder-decoder ones left as they are.
      - pre-ln: the same holds for Pre-LN models (``layer.norm_first``), whose decoder stack
        ends with ``model.decoder.norm``.

    1. x = model.tgt_embed(token) plus the positional encoding of *this token's position*: row
       ``position`` of the table ``model.pos.table`` (max_len, d_model), float64, cast to x's
       dtype; then model.dropout (off in eval mode).
    2. For each layer and its cache: self-attention whose query, key and value come from the
       sub-layer's input h: append h's key and value (w_k, w_v, split into heads) to the cache,
       then attend over all cached ones (no mask: every earlier token may be seen, none is in
       the future); cross-attention of h's query over cross_k, cross_v with src_mask; the FFN.
       Wrap each sub-layer with ``residual(x, sublayer, norm, layer.dropout, layer.norm_first)``
       as DecoderLayer does, so that Post-LN and Pre-LN both work.
    3. Under Pre-LN the stack ends with ``model.decoder.norm`` (None under Post-LN).
    """
    raise NotImplementedError


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    """``aiayn.pt.decoding.greedy_decode(model, src, max_len, bos_id, eos_id)`` with the cache.
    Encode once, start the cache, then at every step give ``decode_step`` the newest token.

    Promises (the grader checks each one):
      - ids: the ids of aiayn.pt's greedy_decode: (B, 1 + steps), starting with bos_id,
        pad_id after a sentence's EOS, stopping when every sentence has produced EOS or after
        max_len tokens.
      - one-position: the decoder runs on one new position per step, never on the prefix again.
      - eval: the model is put in eval mode first (dropout off), as the course's function does.
    """
    raise NotImplementedError
