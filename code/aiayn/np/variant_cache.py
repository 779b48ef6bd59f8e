"""The key-value cache of a decoder with grouped-query or rotary attention, NumPy.

The paper's ``IncrementalDecoder`` (the fast-decoding chapter) caches h heads of keys and values
per layer and adds each new token's row of the positional table. With ``GroupedQueryAttention``
(``aiayn.np.gqa``) the cache holds num_kv_heads heads, h / num_kv_heads times fewer bytes, and
under rotary positions nothing is added: each key is rotated at its position as it enters the
cache, each new query at its own. ``VariantIncrementalDecoder`` is that cache, the paper's class
with these two changes (``reorder``, for beam search, is the paper's); ``has_cache`` says whether the
decoding functions can cache a model, ``incremental_decoder`` picks the cache it needs. The tests compare both with ``model.decode`` over the whole prefix.
"""

import numpy as np

from .._checks import check_rank, check_same
from .attention import merge_heads
from .encoder import residual
from .gqa import GroupedQueryAttention
from .incremental import _PARTS, IncrementalDecoder, can_cache, positional_rows


def variant_layer_step(layer, x, cache: dict, start: int, self_mask=None, src_mask=None):
    """``decoder_layer_step`` for a layer of ``GroupedQueryAttention``: the new positions ``x``
    (B, T_new, d_model) stand at ``start`` .. ``start + T_new - 1``; their keys (rotated there)
    and values, num_kv_heads heads each, are appended to ``cache["self_k"]``, ``cache["self_v"]``."""
    def self_attention(h):
        a = layer.self_attn
        cache["self_k"] = np.concatenate([cache["self_k"], a.keys(h, start)], axis=2)
        cache["self_v"] = np.concatenate([cache["self_v"], a.values(h)], axis=2)
        out, _ = a.attend(a.queries(h, start), cache["self_k"], cache["self_v"], self_mask)
        return a.w_o(merge_heads(out))

    def cross_attention(h):
        a = layer.cross_attn
        out, _ = a.attend(a.queries(h), cache["cross_k"], cache["cross_v"], src_mask)
        return a.w_o(merge_heads(out))

    x = residual(x, self_attention, layer.norm1, layer.dropout, layer.norm_first)
    x = residual(x, cross_attention, layer.norm2, layer.dropout, layer.norm_first)
    return residual(x, layer.ffn, layer.norm3, layer.dropout, layer.norm_first)


class VariantIncrementalDecoder(IncrementalDecoder):
    """``IncrementalDecoder`` for a model whose decoder attention is ``GroupedQueryAttention``.

    ``cache[i]`` holds "self_k" (B, G, t, d_k), "self_v" (B, G, t, d_v), "cross_k" (B, G, S, d_k)
    and "cross_v" (B, G, S, d_v) with G = num_kv_heads: h / G times fewer bytes than the paper's.
    Under rotary positions nothing is added to the embedding; the keys are rotated at their
    positions as they enter the cache, each new query at its own. ``reorder`` is the paper's."""

    def __init__(self, model, memory, src_mask=None):
        layers = getattr(getattr(model, "decoder", None), "layers", [])
        if not all(hasattr(model, name) for name in ("tgt_embed", "pos", "dropout", "config")) or not layers or not all(
                isinstance(a, GroupedQueryAttention) for layer in layers for a in (layer.self_attn, layer.cross_attn)):
            raise ValueError(f"VariantIncrementalDecoder needs an encoder-decoder model whose decoder attention is "
                             f"GroupedQueryAttention; {type(model).__name__} is not one (use IncrementalDecoder)")
        check_rank("memory", memory, 3, "(B, T_src, d_model)")
        self.model, self.src_mask, self.length = model, src_mask, 0
        self.target_keep = np.ones((memory.shape[0], 0), dtype=bool)
        self.cache = [{"self_k": layer.self_attn.keys(memory[:, :0]), "self_v": layer.self_attn.values(memory[:, :0]),
                       "cross_k": layer.cross_attn.keys(memory), "cross_v": layer.cross_attn.values(memory)}
                      for layer in layers]

    def forward(self, tokens: np.ndarray) -> np.ndarray:
        """tokens (B, T_new) at positions length .. length + T_new - 1 -> hidden states
        (B, T_new, d_model), those of ``model.decode`` at these positions."""
        check_rank("tokens", tokens, 2, "(B, T_new) token ids")
        check_same("tokens", tokens, 0, "the cache's target ids", self.target_keep, 0, "the batch size B")
        m, T_new = self.model, tokens.shape[1]
        x = m.tgt_embed(tokens)
        if m.config.positional != "rotary":
            x = x + positional_rows(m.pos, self.length, T_new)
        x = m.dropout(x)
        self.target_keep = np.concatenate([self.target_keep, tokens != m.config.pad_id], axis=1)
        self_mask = self.self_attention_mask(T_new)
        for layer, cache in zip(m.decoder.layers, self.cache):
            x = variant_layer_step(layer, x, cache, self.length, self_mask, self.src_mask)
        self.length += T_new
        return x if m.decoder.norm is None else m.decoder.norm(x)


def has_cache(model) -> bool:
    """Whether the decoding functions can give ``model`` a key-value cache: the paper's
    (``can_cache``) or, for a decoder of ``GroupedQueryAttention``, this module's."""
    layers = getattr(getattr(model, "decoder", None), "layers", [])
    variant = any(isinstance(getattr(layer, "self_attn", None), GroupedQueryAttention) for layer in layers)
    return can_cache(model) or (variant and all(hasattr(model, name) for name in _PARTS))


def incremental_decoder(model, memory, src_mask=None):
    """The key-value cache ``model`` needs: ``VariantIncrementalDecoder`` when its decoder's
    attention is ``GroupedQueryAttention``, else the paper's ``IncrementalDecoder``."""
    layers = getattr(getattr(model, "decoder", None), "layers", [])
    if any(isinstance(layer.self_attn, GroupedQueryAttention) for layer in layers):
        return VariantIncrementalDecoder(model, memory, src_mask)
    return IncrementalDecoder(model, memory, src_mask)
