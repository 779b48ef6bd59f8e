"""Incremental decoding with a key-value cache, NumPy.

Generating n tokens with ``model.decode`` runs the decoder over the whole prefix at every step,
1 + 2 + ... + n = n(n + 1)/2 positions, although two things never change from step to step:

- the keys and values of past positions in decoder self-attention: position j's key depends on
  tokens 0..j only (the causal mask), so it is the same at every later step;
- the keys and values of encoder-decoder attention: projections of the encoder output.

``IncrementalDecoder`` keeps both, per layer, and runs the decoder on the new position only: n
positions for n tokens. It reuses the trained model's own sub-modules (embedding, positional
table, projections, LayerNorms, FFN) and returns what ``model.decode`` returns for the new
positions (tests: float64, 1e-10). ``model.decode`` stays the reference.
"""

import numpy as np

from .._checks import check_rank, check_same, shape_of
from .attention import merge_heads, scaled_dot_product_attention, split_heads
from .encoder import residual
from .gqa import GroupedQueryAttention

_PARTS = ("tgt_embed", "pos", "dropout", "decoder", "config")


def can_cache(model) -> bool:
    """Whether ``model`` has the parts ``IncrementalDecoder`` reuses (the course's Transformer
    does; a stand-in that only scripts ``decode`` does not, and is decoded without a cache).
    A decoder of ``GroupedQueryAttention`` (shared key/value heads, rotary positions) is not this
    cache's: ``aiayn.np.variant_cache`` has its own, which the decoding functions use
    (``variant_cache.has_cache``)."""
    return (all(hasattr(model, name) for name in _PARTS) and hasattr(model.decoder, "layers")
            and not any(isinstance(module, GroupedQueryAttention) for module in model.decoder.modules()))


def positional_rows(pos, start: int, count: int) -> np.ndarray:
    """Rows ``start .. start + count - 1`` of the positional table (fixed or learned), shape
    (count, d_model): the encodings of the positions that the new tokens stand at.
    ``model.pos(x)`` adds rows 0 .. T-1, which is right only for a sequence that starts at 0."""
    table = pos.table  # fixed sinusoids or learned vectors alike
    if start + count > table.shape[0]:
        raise ValueError(f"positions {start}..{start + count - 1} exceed the positional table "
                         f"(config.max_len={table.shape[0]})")
    return table[start:start + count]


def attend_cached(mha, query, k, v, mask=None):
    """``MultiHeadAttention.forward`` with the keys and values already projected and split into
    heads: query (B, T_q, d_model), k (B, H, T_k, d_k), v (B, H, T_k, d_v) -> (B, T_q, d_model)."""
    q = split_heads(mha.w_q(query), mha.num_heads)
    out, _ = scaled_dot_product_attention(q, k, v, mask)
    return mha.w_o(merge_heads(out))


def decoder_layer_step(layer, x, cache: dict, self_mask=None, src_mask=None):
    """``DecoderLayer.forward`` for the new positions ``x`` (B, T_new, d_model) only. Their
    self-attention keys and values are appended to ``cache["self_k"]``, ``cache["self_v"]``
    (B, H, t, d); encoder-decoder attention reads ``cache["cross_k"]``, ``cache["cross_v"]``."""
    def self_attention(h):  # h: the sub-layer's input, after norm1 under Pre-LN
        a = layer.self_attn
        k, v = split_heads(a.w_k(h), a.num_heads), split_heads(a.w_v(h), a.num_heads)
        cache["self_k"] = np.concatenate([cache["self_k"], k], axis=2)  # one position longer
        cache["self_v"] = np.concatenate([cache["self_v"], v], axis=2)
        return attend_cached(a, h, cache["self_k"], cache["self_v"], self_mask)

    def cross_attention(h):
        return attend_cached(layer.cross_attn, h, cache["cross_k"], cache["cross_v"], src_mask)

    x = residual(x, self_attention, layer.norm1, layer.dropout, layer.norm_first)
    x = residual(x, cross_attention, layer.norm2, layer.dropout, layer.norm_first)
    return residual(x, layer.ffn, layer.norm3, layer.dropout, layer.norm_first)


class IncrementalDecoder:
    """``model.decode``, a few positions (usually one) per call, with a key-value cache:

        decoder = IncrementalDecoder(model, memory, src_mask)  # encoder-decoder K, V: once
        hidden = decoder(ys[:, -1:])  # (B, 1, d_model): model.decode(ys, ...)[:, -1:]
        decoder.reorder(rows)         # beam search: the beams were re-ranked or dropped

    ``cache[i]`` is layer i's dict: "self_k" (B, H, t, d_k) and "self_v" (B, H, t, d_v), one
    position longer after every step, and "cross_k" (B, H, S, d_k), "cross_v" (B, H, S, d_v).
    ``length`` = t, the number of positions decoded so far, is the position of the next token.
    Target padding (greedy decoding appends it after EOS) is masked as ``target_mask`` masks it.
    Call it in eval mode and without gradients, as the decoding functions do.
    """

    def __init__(self, model, memory, src_mask=None):
        missing = [name for name in _PARTS if not hasattr(model, name)]
        if missing or not hasattr(model.decoder, "layers"):
            raise ValueError(f"IncrementalDecoder reuses the model's {', '.join(_PARTS)} and "
                             f"decoder.layers; {type(model).__name__} lacks "
                             f"{', '.join(missing) or 'decoder.layers'}")
        check_rank("memory", memory, 3, "(B, T_src, d_model)")
        self.model, self.src_mask, self.length = model, src_mask, 0
        self.target_keep = np.ones((memory.shape[0], 0), dtype=bool)
        self.cache = []
        for layer in model.decoder.layers:
            a, c = layer.self_attn, layer.cross_attn
            self.cache.append({
                # Empty (B, H, 0, d): projecting zero positions gives the shape and the dtype
                # that the keys and values of every step will have.
                "self_k": split_heads(a.w_k(memory[:, :0]), a.num_heads),
                "self_v": split_heads(a.w_v(memory[:, :0]), a.num_heads),
                # Computed once per sentence: every step's queries read the same ones.
                "cross_k": split_heads(c.w_k(memory), c.num_heads),
                "cross_v": split_heads(c.w_v(memory), c.num_heads),
            })

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        return self.forward(tokens)

    def forward(self, tokens: np.ndarray) -> np.ndarray:
        """tokens (B, T_new): the target ids at positions length .. length + T_new - 1 ->
        hidden states (B, T_new, d_model), those of ``model.decode`` at these positions."""
        check_rank("tokens", tokens, 2, "(B, T_new) token ids")
        check_same("tokens", tokens, 0, "the cache's target ids", self.target_keep, 0,
                   "the batch size B")
        m, T_new = self.model, tokens.shape[1]
        x = m.tgt_embed(tokens)
        # The position offset: the new tokens stand at positions length, length + 1, ...
        x = m.dropout(x + positional_rows(m.pos, self.length, T_new))
        self.target_keep = np.concatenate([self.target_keep, tokens != m.config.pad_id], axis=1)
        self_mask = self.self_attention_mask(T_new)
        for layer, cache in zip(m.decoder.layers, self.cache):
            x = decoder_layer_step(layer, x, cache, self_mask, self.src_mask)
        self.length += T_new
        return x if m.decoder.norm is None else m.decoder.norm(x)

    def self_attention_mask(self, T_new: int):
        """(B, 1, T_new, length + T_new): new position i sees keys 0 .. length + i that are not
        padding. ``None`` when nothing is masked (one new token, no padding): the same weights
        as an all-True mask, and the cheaper softmax."""
        total = self.length + T_new
        causal = np.arange(total)[None, :] <= np.arange(self.length, total)[:, None]
        mask = self.target_keep[:, None, None, :] & causal
        return None if bool(mask.all()) else mask

    def reorder(self, rows: np.ndarray, within_sentences: bool = False) -> None:
        """Keeps batch rows ``rows`` (1-D integer indices), in that order: row i continues the
        prefix of old row ``rows[i]``. Beam search calls it when it re-ranks its beams and when
        finished sentences leave the batch. ``within_sentences=True`` promises that ``rows[i]``
        and i are beams of the same sentence: the encoder-decoder keys and values (and the
        source mask), equal for all beams of a sentence, then stay where they are, not copied."""
        if rows.ndim != 1:
            raise ValueError(f"rows must be 1-D batch indices, got shape {shape_of(rows)}")
        self.target_keep = self.target_keep[rows]
        names = ["self_k", "self_v"] + ([] if within_sentences else ["cross_k", "cross_v"])
        for cache in self.cache:
            for name in names:
                cache[name] = cache[name][rows]
        if not within_sentences and self.src_mask is not None:
            self.src_mask = self.src_mask[rows]
