"""Grader of the chapter "Fast decoding": greedy decoding with a key-value cache. The reader's
``decode_step`` is run token by token and compared with ``model.decode`` over the whole prefix
(the uncached reference) on random float64 course models, Post-LN and Pre-LN, with d_k != d_v;
three classic mistakes are recognised by recomputing them with the course's cache
(``aiayn.pt.incremental``): every token at position 0, a cache that keeps only the newest key
and value, and a Pre-LN stack without its final LayerNorm. ``greedy_decode`` must return
``aiayn.pt.decoding.greedy_decode``'s ids and run the decoder on one new position per step."""

import torch
from torch import nn

from ...config import TransformerConfig
from ...data.specials import BOS_ID, EOS_ID
from ...pt.attention import split_heads
from ...pt.decoding import greedy_decode as course_greedy_decode
from ...pt.incremental import IncrementalDecoder, decoder_layer_step, positional_rows
from ...pt.masks import padding_mask
from ...pt.model import Transformer
from ..compare import expect_close, expect_equal, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr
from ._modules import token_ids

ex = exercise("fast_decoding/kv_cache", "fast_decoding/kv_cache.py",
              "greedy decoding with a key-value cache: one new position per step, the same ids",
              zh="带 KV 缓存的贪心解码：每步只算一个新位置，得到相同的 id")
TIGHT = dict(atol=1e-10, rtol=0.0)  # float64: the cache changes only the order of additions

NO_OFFSET = Text("this is what every token at position 0 gives: you forgot the position offset. "
                 "model.pos(x) adds the rows 0 .. T-1 of the table, right for a whole sequence "
                 "but not for one new token; the token at step t stands at position t: add "
                 "model.pos.table[position]",
                 "每个词元都放在位置 0 时，得到的正是这个结果：你忘了位置偏移。model.pos(x) 加的是"
                 "位置编码表的第 0 .. T-1 行，对整个序列是对的，对单独一个新词元却不对；第 t 步的"
                 "词元位于位置 t：要加 model.pos.table[position]")
NO_APPEND = Text("this is what a cache that keeps only the newest key and value gives: the new "
                 "token attends to itself alone. Append to the cache (torch.cat([cache['self_k'], "
                 "k], dim=2)) instead of replacing it",
                 "缓存只保留最新的键和值时，得到的正是这个结果：新词元只关注到它自己。要把新的键和值"
                 "追加到缓存里（torch.cat([cache['self_k'], k], dim=2)），不要替换")
NO_FINAL_NORM = Text("under Pre-LN the decoder stack ends with one more LayerNorm, "
                     "model.decoder.norm (None under Post-LN): apply it to the last layer's "
                     "output",
                     "Pre-LN 下，解码器的层堆叠最后还有一个 LayerNorm，即 model.decoder.norm"
                     "（Post-LN 下为 None）：要把它作用在最后一层的输出上")
NO_SRC_MASK = Text("this is what cross-attention without src_mask gives: the new token attends "
                   "to the source's padding. Pass src_mask to the attention over cross_k and "
                   "cross_v",
                   "交叉注意力不带 src_mask 时，得到的正是这个结果：新词元关注到了源句的填充。"
                   "在对 cross_k 和 cross_v 做注意力时要传入 src_mask")
FROM_SELF = Text("these are the decoder self-attention's projections of memory: encoder-decoder "
                 "keys and values come from layer.cross_attn",
                 "这是解码器自注意力对 memory 的投影：编码器-解码器注意力的键和值来自 "
                 "layer.cross_attn")


def course_model(rng, norm_first: bool) -> Transformer:
    """A small float64 course model, heads with d_k != d_v, untied output weights made so that
    EOS is likely enough for the sentences of a batch to end at different steps."""
    H, d_k = int(rng.integers(2, 4)), int(rng.integers(3, 6))
    config = TransformerConfig(src_vocab_size=int(rng.integers(10, 14)), tgt_vocab_size=11,
                               d_model=2 * int(rng.integers(5, 9)), num_heads=H, num_layers=2,
                               d_ff=24, d_k=d_k, d_v=d_k + int(rng.integers(1, 3)), dropout=0.1,
                               max_len=32, tie_output=False, norm_first=norm_first)
    model = Transformer(config).double().eval()
    with torch.no_grad():
        model.out_proj.weight.mul_(3.0)
        model.out_proj.weight[EOS_ID] += 0.5 * model.out_proj.weight.std()
    return model


def inputs(rng, model, B=3, T=6):
    """A padded source batch, its memory and mask, and a target prefix without padding."""
    c = model.config
    src = token_ids(rng, B, int(rng.integers(4, 8)), c.src_vocab_size, c.pad_id)
    src[-1, -2:] = c.pad_id  # padding in the batch, whatever the draw: src_mask must matter
    src_mask = padding_mask(src, c.pad_id)
    ys = torch.from_numpy(rng.integers(3, c.tgt_vocab_size, size=(B, T)))
    ys[:, 0] = BOS_ID
    with torch.no_grad():
        return src, src_mask, model.encode(src, src_mask), ys


def course_steps(model, ys, memory, src_mask, offset=True, append=True, final_norm=True,
                 source_masked=True):
    """Hidden states (B, T, d_model) of ys decoded one token at a time with the course's cache,
    or with one of the mistakes the hints name."""
    cache = IncrementalDecoder(model, memory, src_mask).cache  # cross K, V; empty self K, V
    out = []
    with torch.no_grad():
        for t in range(ys.shape[1]):
            x = model.tgt_embed(ys[:, t:t + 1])
            x = x + positional_rows(model.pos, t if offset else 0, 1).to(x.dtype)
            for layer, c in zip(model.decoder.layers, cache):
                if not append:
                    c["self_k"], c["self_v"] = c["self_k"][:, :, :0], c["self_v"][:, :, :0]
                x = decoder_layer_step(layer, x, c, None, src_mask if source_masked else None)
            norm = model.decoder.norm
            out.append(x if norm is None or not final_norm else norm(x))
    return torch.cat(out, dim=1)


def reader_steps(mod, model, ys, memory, src_mask):
    cache = need(mod, "start_cache")(model, memory)
    with torch.no_grad():
        out = [need(mod, "decode_step")(model, ys[:, t:t + 1], t, cache, src_mask)
               for t in range(ys.shape[1])]
    for t, h in enumerate(out):
        expect_shape(h, (ys.shape[0], 1, model.config.d_model),
                     tr(f"decode_step's output at step {t}", f"第 {t} 步 decode_step 的输出"),
                     tr("one new token in, its hidden state (B, 1, d_model) out: keep the time "
                        "axis of length 1", "输入一个新词元，输出它的隐藏状态 (B, 1, d_model)："
                        "保留长度为 1 的时间维"))
    return torch.cat(out, dim=1), cache


@ex.check("start_cache: per layer, the encoder output's keys and values; empty self-attention ones",
          zh="start_cache：每层存有编码器输出的键和值；自注意力的键和值为空")
def _(mod, rng):
    model = course_model(rng, norm_first=False)
    _, _, memory, _ = inputs(rng, model)
    with torch.no_grad():
        cache = need(mod, "start_cache")(model, memory)
    layers = model.decoder.layers
    if not isinstance(cache, (list, tuple)) or len(cache) != len(layers):
        raise CheckFailed(tr(f"a list of {len(layers)} dicts, one per decoder layer",
                             f"由 {len(layers)} 个 dict 组成的列表，解码器每层一个"),
                          f"{type(cache).__name__}",
                          tr("one dict per layer of model.decoder.layers",
                             "model.decoder.layers 的每一层对应一个 dict"))
    for i, (layer, c) in enumerate(zip(layers, cache)):
        c_attn, s_attn = layer.cross_attn, layer.self_attn
        with torch.no_grad():
            want = {name: split_heads(w(memory), c_attn.num_heads)
                    for name, w in (("cross_k", c_attn.w_k), ("cross_v", c_attn.w_v))}
            from_self = split_heads(s_attn.w_k(memory), s_attn.num_heads)
        for name in ("cross_k", "cross_v"):
            expect_close(c[name], want[name], tr(f"layer {i}: {name}", f"第 {i} 层：{name}"),
                         f"split_heads(layer.cross_attn.w_{name[-1]}(memory), num_heads), "
                         "(B, H, S, d)", [(from_self, FROM_SELF)], **TIGHT)
        B, H = memory.shape[0], s_attn.num_heads
        for name, w in (("self_k", s_attn.w_k), ("self_v", s_attn.w_v)):
            expect_shape(c[name], (B, H, 0, w.out_features // H),
                         tr(f"layer {i}: {name}", f"第 {i} 层：{name}"),
                         tr("empty before the first step: (B, H, 0, d), e.g. "
                            "split_heads(w_k(memory[:, :0]), num_heads)",
                            "第一步之前是空的：(B, H, 0, d)，例如 "
                            "split_heads(w_k(memory[:, :0]), num_heads)"))


@ex.check("decode_step on <s> (position 0) equals model.decode",
          zh="对 <s>（位置 0）的 decode_step 与 model.decode 一致")
def _(mod, rng):
    model = course_model(rng, norm_first=False)
    _, src_mask, memory, ys = inputs(rng, model, T=1)
    got, _ = reader_steps(mod, model, ys, memory, src_mask)
    with torch.no_grad():
        want = model.decode(ys, memory, src_mask)
    expect_close(got, want, tr("hidden state of <s>", "<s> 的隐藏状态"), tr(
        "embed, add position 0's encoding, then every layer: self-attention over the cache, "
        "cross-attention over cross_k and cross_v with src_mask, the FFN, each wrapped by "
        "residual(...)", "先做嵌入，加上位置 0 的编码，再经过每一层：对缓存做自注意力，带 "
        "src_mask 对 cross_k 和 cross_v 做交叉注意力，再过前馈网络，每个子层都用 residual(...) "
        "包起来"), **TIGHT)


@ex.check("decode_step, token after token, equals model.decode over the whole prefix (Post-LN)",
          zh="逐个词元调用 decode_step，结果与 model.decode 对整个前缀的结果一致（Post-LN）")
def _(mod, rng):
    model = course_model(rng, norm_first=False)
    _, src_mask, memory, ys = inputs(rng, model)
    got, _ = reader_steps(mod, model, ys, memory, src_mask)
    with torch.no_grad():
        want = model.decode(ys, memory, src_mask)
    mistakes = [(course_steps(model, ys, memory, src_mask, offset=False), NO_OFFSET),
                (course_steps(model, ys, memory, src_mask, append=False), NO_APPEND),
                (course_steps(model, ys, memory, src_mask, source_masked=False), NO_SRC_MASK)]
    expect_close(got, want, tr("hidden states, steps 0..5", "第 0..5 步的隐藏状态"), tr(
        "step t: the token at position t, attending to the keys and values of steps 0..t",
        "第 t 步：位于位置 t 的词元，关注第 0..t 步的键和值"), mistakes, **TIGHT)


@ex.check("the same under Pre-LN, the decoder's final LayerNorm included",
          zh="Pre-LN 下同样一致，包括解码器最后的 LayerNorm")
def _(mod, rng):
    model = course_model(rng, norm_first=True)
    _, src_mask, memory, ys = inputs(rng, model)
    got, _ = reader_steps(mod, model, ys, memory, src_mask)
    with torch.no_grad():
        want = model.decode(ys, memory, src_mask)
    mistakes = [(course_steps(model, ys, memory, src_mask, final_norm=False), NO_FINAL_NORM),
                (course_steps(model, ys, memory, src_mask, offset=False), NO_OFFSET),
                (course_steps(model, ys, memory, src_mask, append=False), NO_APPEND)]
    expect_close(got, want, tr("hidden states, steps 0..5 (Pre-LN)",
                               "第 0..5 步的隐藏状态（Pre-LN）"), tr(
        "wrap each sub-layer with residual(x, sublayer, norm, layer.dropout, layer.norm_first): "
        "under Pre-LN the keys and values come from norm1(x), not from x",
        "每个子层都用 `residual(x, sublayer, norm, layer.dropout, layer.norm_first)` 包起来："
        "Pre-LN 下键和值来自 norm1(x)，不是 x"), mistakes, **TIGHT)


@ex.check("the cache grows by one position per step; the encoder-decoder keys and values stay",
          zh="缓存每步增加一个位置；编码器-解码器注意力的键和值保持不变")
def _(mod, rng):
    model = course_model(rng, norm_first=False)
    _, src_mask, memory, ys = inputs(rng, model, T=4)
    with torch.no_grad():
        start = [{k: v.clone() for k, v in c.items()}
                 for c in need(mod, "start_cache")(model, memory)]
    _, cache = reader_steps(mod, model, ys, memory, src_mask)
    (B, T), H = ys.shape, model.config.num_heads
    for i, (before, after) in enumerate(zip(start, cache)):
        for name in ("self_k", "self_v"):
            expect_shape(after[name], (B, H, T, before[name].shape[-1]),
                         tr(f"layer {i}: {name} after {T} steps", f"第 {i} 层：{T} 步之后的 {name}"),
                         tr("append one position per step along dim 2 (the time axis of "
                            "(B, H, T, d)), never drop or replace the earlier ones",
                            "每步沿 dim 2（(B, H, T, d) 的时间维）追加一个位置，已有的位置不能丢掉"
                            "或替换"))
        for name in ("cross_k", "cross_v"):
            expect_close(after[name], before[name],
                         tr(f"layer {i}: {name} after {T} steps", f"第 {i} 层：{T} 步之后的 {name}"),
                         tr("the encoder output does not change while decoding: leave them",
                            "解码过程中编码器的输出不变：不要动它们"), **TIGHT)


def ends_early(ids) -> bool:
    """Whether a sentence of the batch produced EOS while another went on (padding follows)."""
    return bool((ids[:, :-1] == EOS_ID).any())


def with_early_eos(model, src):
    """The course's ids for ``src`` after giving EOS another weight row (a fraction of its own,
    or a little more than that of a token the model picks) until ``ends_early``; the model keeps
    the first row that does (its own when none does)."""
    original = model.out_proj.weight[EOS_ID].detach().clone()
    liked = torch.unique(course_greedy_decode(model, src, 12, BOS_ID, EOS_ID, use_cache=False)
                         [:, 1:], sorted=True).tolist()
    rows = [original] + [f * original for f in (0.8, 0.5, 0.2)] + [
        f * model.out_proj.weight[t].detach().clone() for t in liked for f in (1.02, 1.05, 1.1)]
    for row in rows + [original]:
        with torch.no_grad():
            model.out_proj.weight[EOS_ID] = row
        want = course_greedy_decode(model, src, 12, BOS_ID, EOS_ID, use_cache=False)
        if ends_early(want):
            break
    return want


@ex.check("greedy_decode returns aiayn.pt's greedy_decode ids (padded batch, early EOS)",
          zh="greedy_decode 返回的 id 与 aiayn.pt 的 greedy_decode 相同（有填充的批次，有句子提前遇到 EOS）")
def _(mod, rng):
    for _ in range(5):  # a random model may decode every sentence alike: draw another
        model = course_model(rng, norm_first=bool(rng.integers(0, 2)))
        src, _, _, _ = inputs(rng, model, B=5)
        want = with_early_eos(model, src)
        if ends_early(want):
            break
    got = need(mod, "greedy_decode")(model, src, 12, BOS_ID, EOS_ID)
    hint = tr("if a decode_step check above fails, fix that first: other hidden states pick "
              "other tokens. Otherwise: feed decode_step the newest token, ys[:, -1:], at "
              "position step; the next token is the argmax of model.out_proj(hidden[:, -1]); "
              "pad_id after a sentence's EOS; stop when every sentence has produced EOS, or "
              "after max_len tokens",
              "如果上面有 decode_step 的检查没通过，先改那里：隐藏状态不同，选出的词元也不同。"
              "否则：每步把最新的词元 ys[:, -1:] 连同位置 `step` 交给 decode_step；下一个词元是 "
              "model.out_proj(hidden[:, -1]) 取 `argmax`；句子生成 EOS 之后补 pad_id；所有句子都"
              "生成了 EOS，或生成满 max_len 个词元时停止")
    expect_shape(got, tuple(want.shape), "ids", hint)
    expect_equal(got, want, "ids", hint)


@ex.check("greedy_decode runs the decoder on one new position per step",
          zh="greedy_decode 每步只让解码器处理一个新位置")
def _(mod, rng):
    model = course_model(rng, norm_first=False)
    with torch.no_grad():  # EOS never wins: every sentence runs the full max_len steps
        model.out_proj.weight[EOS_ID] = -1e3 * model.out_proj.weight.abs().max()
    src, _, _, _ = inputs(rng, model, B=2)
    seen = []
    hook = model.decoder.layers[0].ffn.register_forward_hook(
        lambda module, args, out: seen.append(args[0].shape[0] * args[0].shape[1]))
    try:
        need(mod, "greedy_decode")(model, src, 8, BOS_ID, EOS_ID)
    finally:
        hook.remove()
    if sum(seen) != 2 * 8:
        raise CheckFailed(tr("2 sentences x 8 steps = 16 positions through the decoder",
                             "2 个句子 x 8 步 = 解码器处理 16 个位置"),
                          tr(f"{sum(seen)} positions", f"{sum(seen)} 个位置"),
                          tr("each step decodes the newest token only (decode_step(model, "
                             "ys[:, -1:], step, ...)); re-reading the prefix, model.decode(ys, "
                             "...), costs 1 + 2 + ... + 8 = 36 positions per sentence: what the "
                             "cache is there to avoid",
                             "每步只解码最新的词元（decode_step(model, ys[:, -1:], step, ...)）；"
                             "每步重读整个前缀 model.decode(ys, ...)，每个句子要处理 "
                             "1 + 2 + ... + 8 = 36 个位置：缓存正是为了避免这一点"))


EVAL = "greedy_decode puts the model in eval mode: no dropout while decoding"


@ex.check(EVAL, zh="greedy_decode 先把模型切换到 eval 模式：解码时不做 Dropout")
def _(mod, rng):
    model = course_model(rng, norm_first=False)  # dropout 0.1
    src, _, _, _ = inputs(rng, model, B=2)
    want = course_greedy_decode(model, src, 6, BOS_ID, EOS_ID, use_cache=False)
    model.train()  # as a training loop leaves it
    active = []
    hooks = [m.register_forward_hook(lambda module, args, out: active.append(module.training))
             for m in model.modules() if isinstance(m, nn.Dropout)]
    try:
        got = need(mod, "greedy_decode")(model, src, 6, BOS_ID, EOS_ID)
    finally:
        for hook in hooks:
            hook.remove()
    if any(active):
        raise CheckFailed(tr("every dropout off while decoding", "解码时所有 Dropout 都关闭"),
                          tr(f"{sum(active)} dropout calls in train mode",
                             f"{sum(active)} 次 Dropout 在训练模式下运行"),
                          tr("a model handed over from training is in train mode, and its "
                             "dropout would change the tokens from run to run: call model.eval() "
                             "first, as aiayn.pt.decoding.greedy_decode does",
                             "刚训练完交过来的模型处于训练模式，其 Dropout 会让每次解码得到的词元"
                             "不同：先调用 model.eval()，和 aiayn.pt.decoding.greedy_decode 一样"))
    expect_equal(got, want, "ids", tr("the ids of aiayn.pt's greedy_decode",
                                      "与 aiayn.pt 的 greedy_decode 相同的 id"))


FIRST = "start_cache: per layer, the encoder output's keys and values; empty self-attention ones"
ON_BOS = "decode_step on <s> (position 0) equals model.decode"
STEPS = "decode_step, token after token, equals model.decode over the whole prefix (Post-LN)"
ex.keeps({
    "start_cache: layout": FIRST,
    "start_cache: empty-self": FIRST,
    "start_cache: cross": FIRST,
    "decode_step: shape": ON_BOS,
    "decode_step: hidden": (ON_BOS, STEPS),
    "decode_step: position": STEPS,
    "decode_step: appends": "the cache grows by one position per step; the encoder-decoder keys "
                            "and values stay",
    "decode_step: pre-ln": "the same under Pre-LN, the decoder's final LayerNorm included",
    "greedy_decode: ids": "greedy_decode returns aiayn.pt's greedy_decode ids (padded batch, "
                          "early EOS)",
    "greedy_decode: one-position": "greedy_decode runs the decoder on one new position per step",
    "greedy_decode: eval": EVAL,
})
