"""Leaves src_mask out of the cross-attention: the new token attends to the source's padding.

exercise: fast_decoding/kv_cache
caught by: decode_step, token after token, equals model.decode over the whole prefix (Post-LN)
message mentions: src_mask
breaks: decode_step: hidden
"""

from pathlib import Path

# Start from the reference solution: the definitions below replace the correct ones, also where
# the file's other functions use them.
_reference = Path(__file__).resolve().parents[2] / "exercises/solutions/fast_decoding/kv_cache.py"
exec(compile(_reference.read_text(encoding="utf8"), str(_reference), "exec"))


def decode_step(model, token, position, cache, src_mask):
    x = model.tgt_embed(token)
    x = model.dropout(x + model.pos.table[position].to(x.dtype))
    for layer, c in zip(model.decoder.layers, cache):
        def self_attention(h, layer=layer, c=c):
            a = layer.self_attn
            c["self_k"] = torch.cat([c["self_k"], split_heads(a.w_k(h), a.num_heads)], dim=2)  # noqa: F821
            c["self_v"] = torch.cat([c["self_v"], split_heads(a.w_v(h), a.num_heads)], dim=2)  # noqa: F821
            return attend(a, h, c["self_k"], c["self_v"])  # noqa: F821

        def cross_attention(h, layer=layer, c=c):
            # the mistake: no src_mask, so the source's padding is seen
            return attend(layer.cross_attn, h, c["cross_k"], c["cross_v"], None)  # noqa: F821

        x = residual(x, self_attention, layer.norm1, layer.dropout, layer.norm_first)  # noqa: F821
        x = residual(x, cross_attention, layer.norm2, layer.dropout, layer.norm_first)  # noqa: F821
        x = residual(x, layer.ffn, layer.norm3, layer.dropout, layer.norm_first)  # noqa: F821
    return x if model.decoder.norm is None else model.decoder.norm(x)
