"""Reference solution: greedy decoding with a key-value cache."""

import torch

from aiayn.pt.attention import merge_heads, scaled_dot_product_attention, split_heads
from aiayn.pt.encoder import residual
from aiayn.pt.masks import padding_mask


def start_cache(model, memory):
    cache = []
    for layer in model.decoder.layers:
        a, c = layer.self_attn, layer.cross_attn
        cache.append({"self_k": split_heads(a.w_k(memory[:, :0]), a.num_heads),  # (B, H, 0, d_k)
                      "self_v": split_heads(a.w_v(memory[:, :0]), a.num_heads),
                      "cross_k": split_heads(c.w_k(memory), c.num_heads),  # once per sentence
                      "cross_v": split_heads(c.w_v(memory), c.num_heads)})
    return cache


def attend(mha, h, k, v, mask=None):
    """Multi-head attention of h's queries over keys and values already split into heads."""
    out, _ = scaled_dot_product_attention(split_heads(mha.w_q(h), mha.num_heads), k, v, mask)
    return mha.w_o(merge_heads(out))


def decode_step(model, token, position, cache, src_mask):
    x = model.tgt_embed(token)
    # The position offset: this token stands at `position`, not at 0 as model.pos(x) assumes.
    x = model.dropout(x + model.pos.table[position].to(x.dtype))
    for layer, c in zip(model.decoder.layers, cache):
        def self_attention(h, layer=layer, c=c):
            a = layer.self_attn
            c["self_k"] = torch.cat([c["self_k"], split_heads(a.w_k(h), a.num_heads)], dim=2)
            c["self_v"] = torch.cat([c["self_v"], split_heads(a.w_v(h), a.num_heads)], dim=2)
            return attend(a, h, c["self_k"], c["self_v"])

        def cross_attention(h, layer=layer, c=c):
            return attend(layer.cross_attn, h, c["cross_k"], c["cross_v"], src_mask)

        x = residual(x, self_attention, layer.norm1, layer.dropout, layer.norm_first)
        x = residual(x, cross_attention, layer.norm2, layer.dropout, layer.norm_first)
        x = residual(x, layer.ffn, layer.norm3, layer.dropout, layer.norm_first)
    return x if model.decoder.norm is None else model.decoder.norm(x)


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id):
    model.eval()
    pad_id = model.config.pad_id
    src_mask = padding_mask(src, pad_id)
    cache = start_cache(model, model.encode(src, src_mask))
    ys = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for step in range(max_len):
        hidden = decode_step(model, ys[:, -1:], step, cache, src_mask)  # the newest token only
        next_token = torch.where(done, pad_id, model.out_proj(hidden[:, -1]).argmax(dim=-1))
        ys = torch.cat([ys, next_token[:, None]], dim=1)
        done |= next_token == eos_id
        if done.all():
            break
    return ys
