"""Graders of the from-scratch chapter, stages 7-8: the whole model against
``aiayn.pt.model.Transformer`` with the same weights, and greedy decoding, first on a scripted
model whose every answer is known, then against ``aiayn.pt.decoding.greedy_decode``."""

import re

import torch
from torch import nn

from ...config import TransformerConfig
from ...pt.decoding import greedy_decode as course_greedy_decode
from ...pt.model import Transformer
from ..calls import modules_of_type
from ..compare import expect_close, expect_equal, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import tr
from ._modules import build, copy_weights, grads_of, tensor, token_ids

FILE = "from_scratch/transformer.py"
# The reader's positional table may be float32 (as in the reference): differences of ~1e-7
# are expected; every mistake recognised here is off by far more.
LOOSE = dict(atol=1e-6, rtol=1e-5)

# Stage 7 -----------------------------------------------------------------------------------
model = exercise("from_scratch/transformer", FILE,
                 "stage 7: the encoder-decoder model: embeddings, stacks, tied output layer",
                 zh="第 7 步：编码器-解码器模型：嵌入、层堆叠、共享权重的输出层")


def scratch_key(course_key: str) -> str:
    """The course's Encoder/Decoder hold ``layers``; the whiteboard model lists layers directly."""
    return re.sub(r"^(encoder|decoder)\.layers\.", r"\1.", course_key)


def small_config(rng) -> TransformerConfig:
    H, d_k = int(rng.integers(2, 4)), int(rng.integers(2, 4)) * 2
    return TransformerConfig(
        src_vocab_size=int(rng.integers(9, 14)), tgt_vocab_size=int(rng.integers(7, 12)),
        d_model=H * d_k, num_heads=H, num_layers=2, d_ff=3 * H * d_k, dropout=0.0, max_len=24,
        pad_id=int(rng.integers(0, 3)))


def reader_model(mod, config, dropout=0.0):
    return build(mod, "Transformer", config.src_vocab_size, config.tgt_vocab_size,
                 d_model=config.d_model, num_heads=config.num_heads,
                 num_layers=config.num_layers, d_ff=config.d_ff, dropout=dropout,
                 max_len=config.max_len, pad_id=config.pad_id)


def model_pair(mod, rng):
    """A small course Transformer and the reader's, same weights, float64, eval mode."""
    config = small_config(rng)
    theirs = Transformer(config).double().eval()
    mine = reader_model(mod, config)
    copy_weights(mine, theirs, scratch_key)
    return config, mine, theirs


def batch(rng, config, B=3):
    src = token_ids(rng, B, int(rng.integers(4, 9)), config.src_vocab_size, config.pad_id)
    tgt = token_ids(rng, B, int(rng.integers(4, 9)), config.tgt_vocab_size, config.pad_id)
    return src, tgt


@model.check("parameters named like the course's; out_proj.weight IS tgt_embed.weight",
             zh="参数名与课程的实现相同；out_proj.weight 就是 tgt_embed.weight 本身")
def _(mod, rng):
    _, mine, _ = model_pair(mod, rng)
    out_proj, embed = getattr(mine, "out_proj", None), getattr(mine, "tgt_embed", None)
    if out_proj is None or embed is None or out_proj.weight is not embed.weight:
        raise CheckFailed(tr("out_proj.weight to be the same Parameter as tgt_embed.weight",
                             "out_proj.weight 与 tgt_embed.weight 是同一个 Parameter"),
                          tr("two separate matrices", "两个独立的矩阵"),
                          tr("tie them (§3.4): self.out_proj.weight = self.tgt_embed.weight",
                             "让两者共享权重（§3.4）：self.out_proj.weight = self.tgt_embed.weight"))


@model.check("encode equals the course's: embeddings * √d_model + positions, padding masked",
             zh="encode 与课程的实现一致：嵌入乘以 √d_model 再加位置编码，填充被屏蔽")
def _(mod, rng):
    config, mine, theirs = model_pair(mod, rng)
    src, _ = batch(rng, config)
    pad = (src != config.pad_id)[:, None, None, :]
    emb = theirs.src_embed.weight[src]
    pe = theirs.pos(torch.zeros_like(emb))
    expect_close(need(mine, "encode")(src), theirs.encode(src), "memory", tr(
        "x = src_embed(src) * sqrt(d_model) + PE[:T], then the encoder layers with "
        "padding_mask(src)", "x = src_embed(src) * sqrt(d_model) + PE[:T]，再带着 "
        "padding_mask(src) 经过各个编码器层"), [
        (theirs.encoder(emb + pe, pad), tr(
            "the embeddings are not multiplied by sqrt(d_model) (√d_model, §3.4)",
            "嵌入没有乘以 sqrt(d_model)（√d_model，§3.4）")),
        (theirs.encoder(emb * config.d_model ** 0.5, pad), tr(
            "the positional encoding is not added", "没有加上位置编码")),
        (theirs.encoder(theirs.pos(theirs.src_embed(src))), tr(
            "source padding is not masked: build padding_mask(src, pad_id) when src_mask is None",
            "源句的填充没有被屏蔽：src_mask 为 None 时要构造 padding_mask(src, pad_id)"))],
        **LOOSE)


@model.check("forward (teacher forcing) equals the course's logits, with padding",
             zh="forward（教师强制）得到的 logits 与课程的实现一致，带填充")
def _(mod, rng):
    config, mine, theirs = model_pair(mod, rng)
    src, tgt = batch(rng, config)
    expect_close(mine(src, tgt), theirs(src, tgt), "logits", tr(
        "logits = out_proj(decode(tgt, encode(src), src_mask)); decode builds target_mask(tgt) "
        "when tgt_mask is None", "logits = out_proj(decode(tgt, encode(src), src_mask))；"
        "tgt_mask 为 None 时，decode 要构造 target_mask(tgt)"), **LOOSE)


@model.check("decoding is causal: a later target token changes no earlier logits",
             zh="解码是因果的：改动靠后的目标词元，不影响前面任何位置的 logits")
def _(mod, rng):
    config, mine, _ = model_pair(mod, rng)
    src, _ = batch(rng, config)
    T = int(rng.integers(4, 9))
    tgt = token_ids(rng, src.shape[0], T, config.tgt_vocab_size, config.pad_id, min_len=T)
    t = int(rng.integers(1, T))
    changed, V = tgt.clone(), config.tgt_vocab_size
    step = (tgt[:, t] + 1) % V  # another token, and not the padding id
    changed[:, t] = torch.where(step == config.pad_id, (tgt[:, t] + 2) % V, step)
    before, after = mine(src, tgt), mine(src, changed)
    if not torch.allclose(before[:, :t], after[:, :t], atol=1e-12, rtol=0):
        raise CheckFailed(tr(f"logits before position {t} unchanged when token {t} changes",
                             f"词元 {t} 改变时，位置 {t} 之前的 logits 不变"),
                          tr("they changed", "它们变了"),
                          tr("decode must pass target_mask(tgt, pad_id) to every decoder layer",
                             "decode 必须把 target_mask(tgt, pad_id) 传给每一个解码器层"))


@model.check("gradients equal the course's for every parameter",
             zh="每个参数的梯度都与课程的实现一致")
def _(mod, rng):
    config, mine, theirs = model_pair(mod, rng)
    src, tgt = batch(rng, config)
    target = tensor(rng, *tgt.shape, config.tgt_vocab_size)
    for m in (mine, theirs):
        (m(src, tgt) * target).sum().backward()
    got = grads_of(mine)
    for name, want in grads_of(theirs).items():
        grad = got.get(scratch_key(name))
        key = scratch_key(name)
        if grad is None:
            raise CheckFailed(tr(f"a gradient for {key}", f"{key} 有梯度"), "None", tr(
                "every parameter must take part in forward, nothing detached",
                "每个参数都要参与 `forward`，不能 `detach` 任何东西"))
        expect_close(grad, want, tr(f"gradient of {key}", f"{key} 的梯度"), tr(
            "the gradients follow from a correct forward pass", "前向传播对了，梯度自然就对"),
            **LOOSE)


EMBEDDING_DROPOUT = "dropout on the embeddings in train mode"
OWN_MODEL = "built from this file's classes: no nn.Transformer* inside"


@model.check(EMBEDDING_DROPOUT, zh="训练模式下对嵌入做 Dropout")
def _(mod, rng):
    config = small_config(rng)
    mine = reader_model(mod, config, dropout=0.5)
    for name, module in mine.named_modules():  # the layers' dropout off: only the embeddings'
        if isinstance(module, nn.Dropout) and "." in name:
            module.p = 0.0
    src, _ = batch(rng, config)
    mine.train()
    if torch.allclose(need(mine, "encode")(src), mine.encode(src)):
        raise CheckFailed(tr("two train-mode encodes to differ (dropout=0.5 on the embeddings, "
                             "the layers' dropout set to 0)",
                             "训练模式下两次 encode 的结果不同（嵌入处 dropout=0.5，各层的 "
                             "Dropout 设为 0）"),
                          tr("identical outputs", "两次输出完全相同"),
                          tr("§5.4 applies dropout to the sum of the embeddings and the positional "
                             "encodings: self.dropout(embed(tokens) * sqrt(d_model) + PE[:T]), "
                             "for the source and for the target",
                             "§5.4 对嵌入与位置编码之和使用 Dropout："
                             "self.dropout(embed(tokens) * sqrt(d_model) + PE[:T])，源语言和"
                             "目标语言都要"))


@model.check(OWN_MODEL, zh="由本文件中的类搭建：内部没有 nn.Transformer*")
def _(mod, rng):
    found = modules_of_type(reader_model(mod, small_config(rng)), (
        nn.Transformer, nn.TransformerEncoder, nn.TransformerDecoder,
        nn.TransformerEncoderLayer, nn.TransformerDecoderLayer))
    if found:
        raise CheckFailed(tr("the model built from your EncoderLayer and DecoderLayer",
                             "由你自己的 EncoderLayer 和 DecoderLayer 搭建的模型"),
                          tr(", ", "、").join(found[:3]),
                          tr("stack the classes of this file: nn.ModuleList(EncoderLayer(...) "
                             "for _ in range(num_layers)), and the same with DecoderLayer",
                             "用本文件中的类堆叠：nn.ModuleList(EncoderLayer(...) for _ in "
                             "range(num_layers))，DecoderLayer 同理"))


model.keeps({
    "Transformer: attributes": "parameters named like the course's; out_proj.weight IS "
                               "tgt_embed.weight",
    "Transformer: encode": "encode equals the course's: embeddings * √d_model + positions, "
                           "padding masked",
    "Transformer: forward": ("forward (teacher forcing) equals the course's logits, with padding",
                             "decoding is causal: a later target token changes no earlier logits",
                             "gradients equal the course's for every parameter"),
    "Transformer: dropout": EMBEDDING_DROPOUT,
    "Transformer: own-model": OWN_MODEL,
})

# Stage 8 -----------------------------------------------------------------------------------
greedy = exercise("from_scratch/greedy_decode", FILE,
                  "stage 8: greedy decoding, one token at a time until EOS",
                  zh="第 8 步：贪心解码，一次生成一个词元，直到 EOS")
BOS, EOS = 1, 2


class ScriptedModel(nn.Module):
    """A fake model with the course's decoding interface whose answers are known: after a prefix
    of length L, row b's most probable next token is ``script[b, L - 1]`` (as if trained).
    It counts ``encode`` calls and checks that every prefix it is shown is the one generated."""

    def __init__(self, script: torch.Tensor, vocab: int, pad_id: int):
        super().__init__()
        self.script, self.vocab, self.pad_id = script, vocab, pad_id
        self.out_proj = nn.Identity()  # decode already returns logits
        self.encode_calls, self.prefix_error = 0, None

    def encode(self, src, src_mask=None):
        self.encode_calls += 1
        return torch.zeros(src.shape[0], src.shape[1], 4)

    def decode(self, tgt, memory, src_mask=None, tgt_mask=None):
        L = tgt.shape[1]
        if L > self.script.shape[1]:
            raise CheckFailed(tr(f"at most {self.script.shape[1]} decoder steps",
                                 f"解码器最多运行 {self.script.shape[1]} 步"),
                              tr(f"a prefix of length {L}", f"长度为 {L} 的前缀"),
                              tr("stop after max_len steps", "运行 max_len 步后就要停下"))
        if self.prefix_error is None and not bool((tgt[:, 0] == BOS).all()):
            self.prefix_error = tr("the decoder input must start with bos_id",
                                   "解码器的输入必须以 bos_id 开头")
        logits = torch.zeros(tgt.shape[0], L, self.vocab)
        logits.scatter_(2, self.script[:, :L, None], 1.0)  # position t predicts script[:, t]
        return logits

    def forward(self, src, tgt):
        return self.out_proj(self.decode(tgt, self.encode(src)))


def expected_ids(script, max_len, pad_id):
    """What greedy decoding must return for ``ScriptedModel(script)``."""
    B = script.shape[0]
    ys, done = [torch.full((B,), BOS)], torch.zeros(B, dtype=torch.bool)
    for step in range(max_len):
        token = torch.where(done, pad_id, script[:, step])
        ys.append(token)
        done |= token == EOS
        if done.all():
            break
    return torch.stack(ys, dim=1)


def scripted(rng, eos_steps, max_len):
    """Row b emits EOS at step eos_steps[b] (None: never); other tokens random non-specials."""
    vocab, pad_id = 9, 0
    script = torch.from_numpy(rng.integers(3, vocab, size=(len(eos_steps), max_len + 1)))
    for b, step in enumerate(eos_steps):
        if step is not None:
            script[b, step] = EOS
    return ScriptedModel(script, vocab, pad_id), script, pad_id


def decode_scripted(mod, rng, eos_steps, max_len):
    fake, script, pad_id = scripted(rng, eos_steps, max_len)
    src = torch.from_numpy(rng.integers(3, 9, size=(len(eos_steps), 5)))
    try:
        got = need(mod, "greedy_decode")(fake, src, max_len, BOS, EOS)
    except AttributeError as error:  # an attribute the promised interface does not have
        if "'ScriptedModel' object has no attribute" not in str(error):
            raise
        raise CheckFailed(tr("only model.encode, model.decode, model.out_proj and model.pad_id "
                             "used", "只用到 model.encode、model.decode、model.out_proj 和 "
                             "model.pad_id"), tr(f"AttributeError: {error}", "抛出了异常：\n"
                                                 + " " * 10 + f"AttributeError: {error}"),
                          tr("the grader runs your greedy_decode on a model that has these four "
                             "and nothing else (and on the course's model): take pad_id from "
                             "model.pad_id and the logits from model.out_proj",
                             "评分程序会在一个只有这四样东西的模型（以及课程的模型）上运行你的 "
                             "greedy_decode：pad_id 取自 model.pad_id，logits 由 model.out_proj "
                             "得到")) from None
    if fake.prefix_error:
        raise CheckFailed(tr("prefixes that start with bos_id", "以 bos_id 开头的前缀"),
                          tr("another first token", "第一个词元是别的"), fake.prefix_error)
    return got, expected_ids(script, max_len, pad_id), fake


@greedy.check("returns int64 ids (B, 1 + steps) starting with bos_id",
              zh="返回以 bos_id 开头的 int64 id，形状为 (B, 1 + 步数)")
def _(mod, rng):
    got, want, _ = decode_scripted(mod, rng, [None, None], max_len=4)
    if getattr(got, "dtype", None) != torch.int64:
        raise CheckFailed(tr("an int64 tensor", "int64 张量"), f"{getattr(got, 'dtype', type(got))}",
                          tr("start from torch.full((B, 1), bos_id, dtype=torch.long)",
                             "从 torch.full((B, 1), bos_id, dtype=torch.long) 开始"))
    expect_shape(got, tuple(want.shape), "ids", tr(
        "one column for bos_id, then one per step; with no EOS, max_len steps",
        "第一列是 bos_id，之后每步一列；没有遇到 EOS 时共 max_len 步"))
    expect_equal(got[:, 0], want[:, 0], "ids[:, 0]", tr("the first column is bos_id",
                                                        "第一列是 bos_id"))


@greedy.check("appends the most probable token after the LAST position, and feeds it back",
              zh="在最后一个位置之后接上概率最大的词元，再把它送回解码器")
def _(mod, rng):
    got, want, fake = decode_scripted(mod, rng, [None, None, None], max_len=5)
    first_only = expected_ids(fake.script[:, :1].expand_as(fake.script), 5, fake.pad_id)
    expect_equal(got, want, "ids", "logits = model.out_proj(model.decode(ys, memory, src_mask)"
                 "[:, -1]); next = logits.argmax(-1); ys = torch.cat([ys, next[:, None]], 1)",
                 [(first_only, tr("you took the logits of the FIRST position at every step: the "
                                  "next token comes from the last one, [:, -1]",
                                  "你每一步取的都是第一个位置的 logits：下一个词元要从最后一个位置"
                                  "取，[:, -1]"))])


@greedy.check("stops when every row has produced EOS; pads a row after its EOS",
              zh="所有行都生成 EOS 后停止；一行生成 EOS 之后补填充")
def _(mod, rng):
    got, want, _ = decode_scripted(mod, rng, [1, 3, 2], max_len=7)
    expect_shape(got, tuple(want.shape), "ids", tr(
        "stop as soon as every row has produced eos_id (here after 4 steps), not at max_len; a "
        "row that is done gets pad_id",
        "所有行都生成 eos_id 后立即停止（这里是 4 步之后），不要等到 max_len；已经结束的行补 pad_id"))
    expect_equal(got, want, "ids", tr(
        "once a row has produced eos_id, append pad_id to it (torch.where(done, pad_id, next)); "
        "keep a `done` flag per row",
        "一行生成 eos_id 之后，就往这一行后面补 pad_id（torch.where(done, pad_id, next)）；每行"
        "记一个 `done` 标志"))


@greedy.check("runs the encoder once, not once per step",
              zh="编码器只运行一次，不是每步一次")
def _(mod, rng):
    _, _, fake = decode_scripted(mod, rng, [None, None], max_len=4)
    if fake.encode_calls != 1:
        raise CheckFailed(tr("1 call to model.encode", "调用 model.encode 1 次"),
                          tr(f"{fake.encode_calls} calls", f"调用了 {fake.encode_calls} 次"),
                          tr("memory = model.encode(src, src_mask) before the loop; each step "
                             "calls model.decode only (model(src, ys) would re-encode every step)",
                             "在循环之前 memory = model.encode(src, src_mask)；每步只调用 "
                             "model.decode（model(src, ys) 每步都会重新编码）"))


@greedy.check("equals aiayn.pt's greedy_decode on a random course model",
              zh="在随机初始化的课程模型上与 aiayn.pt 的 greedy_decode 结果相同")
def _(mod, rng):
    config = TransformerConfig(src_vocab_size=10, tgt_vocab_size=6, d_model=16, num_heads=2,
                               num_layers=2, d_ff=32, dropout=0.0, max_len=16)
    theirs = Transformer(config).double().eval()
    with torch.no_grad():  # make EOS a likely answer, so some rows stop early
        theirs.out_proj.weight[EOS] += 0.4 * theirs.out_proj.weight.std()
    theirs.pad_id = config.pad_id  # the one attribute of the whiteboard model it lacks
    src = token_ids(rng, 6, 6, config.src_vocab_size, config.pad_id)
    want = course_greedy_decode(theirs, src, 8, BOS, EOS)
    got = need(mod, "greedy_decode")(theirs, src, 8, BOS, EOS)
    expect_equal(got, want, "ids", tr(
        "decode greedily with model.encode, model.decode, model.out_proj and model.pad_id only",
        "只用 model.encode、model.decode、model.out_proj 和 model.pad_id 做贪心解码"))


greedy.keeps({
    "greedy_decode: ids": "returns int64 ids (B, 1 + steps) starting with bos_id",
    "greedy_decode: last-position": "appends the most probable token after the LAST position, "
                                    "and feeds it back",
    "greedy_decode: stops": "stops when every row has produced EOS; pads a row after its EOS",
    "greedy_decode: encode-once": "runs the encoder once, not once per step",
    "greedy_decode: interface": ("returns int64 ids (B, 1 + steps) starting with bos_id",
                                 "equals aiayn.pt's greedy_decode on a random course model"),
})
