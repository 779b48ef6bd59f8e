"""Graders of the from-scratch chapter, stages 5-6: LayerNorm, the feed-forward network, the
encoder layer and the decoder layer, compared with ``aiayn.pt`` modules holding the same weights."""

import numpy as np
import torch
from torch import nn

from ...pt import masks as course_masks
from ...pt.decoder import DecoderLayer
from ...pt.encoder import EncoderLayer
from ...pt.feedforward import PositionwiseFeedForward
from ...pt.normalization import LayerNorm
from ..calls import modules_of_type
from ..compare import as_numpy, expect_close
from ..core import CheckFailed, exercise
from ..language import Text, tr
from ._modules import build, copy_weights, head_dims, tensor, token_ids

FILE = "from_scratch/transformer.py"

# Stage 5 -----------------------------------------------------------------------------------
enc = exercise("from_scratch/encoder_layer", FILE,
               "stage 5: LayerNorm, feed-forward network and the (Post-LN) encoder layer",
               zh="第 5 步：LayerNorm、前馈网络和（Post-LN）编码器层")

STD_EPS_HINT = Text("you divided by (std + eps): LayerNorm divides by sqrt(variance + eps), as "
                    "nn.LayerNorm does. The two differ most when the variance is small, as here "
                    "(about 1e-6, against eps = 1e-5)",
                    "你除的是 (std + eps)：LayerNorm 除以 sqrt(variance + eps)，nn.LayerNorm 也是"
                    "这样。方差很小时两者差得最多，这里就是这种情况（方差约 1e-6，而 eps = 1e-5）")
UNBIASED_HINT = Text("you used the unbiased variance (divides by d_model - 1; torch.var's and "
                     "x.std()'s default). LayerNorm uses the biased one: "
                     "x.var(-1, unbiased=False)",
                     "你用了无偏方差（除以 d_model - 1，这是 torch.var 和 x.std() 的默认做法）。"
                     "LayerNorm 用的是有偏方差：x.var(-1, unbiased=False)")
NO_EPS = Text("eps is missing: sqrt(variance + eps) keeps a constant input from dividing by zero",
              "缺了 eps：sqrt(variance + eps) 能防止常数输入时除以零")
OVER_TIME = Text("normalise over the LAST axis (the d_model features of each token), not over "
                 "the positions",
                 "要在最后一维（每个词元的 d_model 个特征）上归一化，不是在位置上")
NO_GAIN = Text("the learnable weight (gain) and bias are not applied: ... * self.weight + "
               "self.bias",
               "没有用上可学习的 `weight`（增益）和 `bias`：... * self.weight + self.bias")
NO_RELU = Text("the ReLU is missing: without it the two linear maps collapse into one",
               "缺了 ReLU：没有它，两个线性映射就合并成了一个")
RELU_AFTER = Text("the ReLU goes between w_1 and w_2, not after w_2",
                  "ReLU 放在 w_1 和 w_2 之间，不是 w_2 之后")


def layer_norm_mistakes(x, weight, bias, eps):
    """What the classic LayerNorm slips return on ``x`` (float64 NumPy)."""
    x, w, b = as_numpy(x), as_numpy(weight), as_numpy(bias)
    c = x - x.mean(-1, keepdims=True)
    var, var_unbiased = x.var(-1, keepdims=True), x.var(-1, ddof=1, keepdims=True)
    over_time = (x - x.mean(-2, keepdims=True)) / np.sqrt(x.var(-2, keepdims=True) + eps)
    return [(c / (np.sqrt(var) + eps) * w + b, STD_EPS_HINT),
            (c / (np.sqrt(var_unbiased) + eps) * w + b, STD_EPS_HINT),
            (c / np.sqrt(var_unbiased + eps) * w + b, UNBIASED_HINT),
            (c / np.sqrt(var) * w + b, NO_EPS),
            (over_time * w + b, OVER_TIME),
            (c / np.sqrt(var + eps), NO_GAIN)]


def layer_norms(mod, rng):
    d_model = int(rng.integers(6, 13))
    theirs = LayerNorm(d_model).double()
    with torch.no_grad():  # random gain and bias, so forgetting them shows
        theirs.weight.copy_(tensor(rng, d_model, scale=0.5) + 1.0)
        theirs.bias.copy_(tensor(rng, d_model, scale=0.5))
    mine = build(mod, "LayerNorm", d_model)
    copy_weights(mine, theirs)
    return d_model, mine, theirs


@enc.check("LayerNorm: weight = ones, bias = zeros, shape (d_model,); eps = 1e-5",
           zh="LayerNorm：`weight` 全为 1，`bias` 全为 0，形状 (d_model,)；eps = 1e-5")
def _(mod, rng):
    d_model = int(rng.integers(6, 13))
    mine = build(mod, "LayerNorm", d_model)
    copy_weights(mine, LayerNorm(d_model).double())  # names and shapes
    fresh = build(mod, "LayerNorm", d_model)
    if not (torch.all(fresh.weight == 1) and torch.all(fresh.bias == 0)):
        raise CheckFailed(tr("weight = ones and bias = zeros at initialisation",
                             "初始化时 `weight` 全为 1，`bias` 全为 0"), tr("other values", "别的值"),
                          tr("start as the identity map: nn.Parameter(torch.ones(d_model)) and "
                             "nn.Parameter(torch.zeros(d_model))",
                             "初始时是恒等映射：nn.Parameter(torch.ones(d_model)) 和 "
                             "nn.Parameter(torch.zeros(d_model))"))
    if getattr(fresh, "eps", None) != 1e-5:
        eps = getattr(fresh, "eps", tr("missing", "缺失"))
        raise CheckFailed(tr("eps = 1e-5 (the default of nn.LayerNorm)",
                             "eps = 1e-5（nn.LayerNorm 的默认值）"),
                          f"eps = {eps}", tr("store eps: self.eps = eps",
                                             "把 `eps` 存下来：self.eps = eps"))


@enc.check("LayerNorm equals nn.LayerNorm on ordinary inputs",
           zh="普通输入下 LayerNorm 与 nn.LayerNorm 一致")
def _(mod, rng):
    d_model, mine, theirs = layer_norms(mod, rng)
    x = tensor(rng, 2, 5, d_model, scale=2.0) + 1.0
    expect_close(mine(x), theirs(x), "LayerNorm(x)", tr(
        "(x - mean) / sqrt(var + eps) * weight + bias over the last axis",
        "在最后一维上计算 (x - mean) / sqrt(var + eps) * weight + bias"),
        layer_norm_mistakes(x, theirs.weight, theirs.bias, theirs.eps))


@enc.check("LayerNorm divides by √(variance + eps), not std + eps (inputs of tiny variance)",
           zh="LayerNorm 除以 √(variance + eps)，不是 std + eps（输入的方差极小）")
def _(mod, rng):
    d_model, mine, theirs = layer_norms(mod, rng)
    x = tensor(rng, 2, 5, d_model, scale=1e-3) + tensor(rng, 2, 5, 1)  # variance ~ 1e-6 ~ eps
    expect_close(mine(x), theirs(x), "LayerNorm(x)", tr("divide by torch.sqrt(var + self.eps)",
                                                        "除以 torch.sqrt(var + self.eps)"),
                 layer_norm_mistakes(x, theirs.weight, theirs.bias, theirs.eps), rtol=1e-7)


@enc.check("FeedForward: w_2(relu(w_1(x))) with w_1 (d_model -> d_ff), w_2 (d_ff -> d_model)",
           zh="FeedForward：w_2(relu(w_1(x)))，其中 w_1 为 d_model -> d_ff，w_2 为 d_ff -> d_model")
def _(mod, rng):
    d_model, d_ff = int(rng.integers(4, 9)), int(rng.integers(10, 17))
    theirs = PositionwiseFeedForward(d_model, d_ff).double()
    mine = build(mod, "FeedForward", d_model, d_ff)
    copy_weights(mine, theirs)
    x = tensor(rng, 2, 5, d_model)
    expect_close(mine(x), theirs(x), "FFN(x)", "max(0, x W_1 + b_1) W_2 + b_2", [
        (theirs.w_2(theirs.w_1(x)), NO_RELU), (torch.relu(theirs(x)), RELU_AFTER),
        (torch.relu(theirs.w_2(theirs.w_1(x))), RELU_AFTER)])


def encoder_pair(mod, rng, dropout=0.0):
    B, H, _, d_model = head_dims(rng)
    d_ff = 2 * d_model
    theirs = EncoderLayer(d_model, H, d_ff, dropout=0.0).double().eval()
    mine = build(mod, "EncoderLayer", d_model, H, d_ff, dropout=dropout)
    copy_weights(mine, theirs)
    return B, d_model, mine, theirs


@enc.check("EncoderLayer has self_attn, ffn, norm1, norm2 with the course's parameter names",
           zh="EncoderLayer 有 self_attn、ffn、norm1、norm2，参数名与课程的实现相同")
def _(mod, rng):
    encoder_pair(mod, rng)


@enc.check("EncoderLayer equals the course's Post-LN layer, with a padding mask",
           zh="带填充掩码时，EncoderLayer 与课程的 Post-LN 层一致")
def _(mod, rng):
    B, d_model, mine, theirs = encoder_pair(mod, rng)
    T = int(rng.integers(4, 8))
    x, mask = tensor(rng, B, T, d_model), course_masks.padding_mask(token_ids(rng, B, T, 9, 0), 0)
    pre_ln = EncoderLayer(d_model, theirs.self_attn.num_heads, 2 * d_model, 0.0, norm_first=True)
    pre_ln.double().eval().load_state_dict(theirs.state_dict())
    expect_close(mine(x, mask), theirs(x, mask), "EncoderLayer(x, mask)",
                 "x = norm1(x + dropout(self_attn(x, x, x, mask))); "
                 "x = norm2(x + dropout(ffn(x)))", [
                     (pre_ln(x, mask), tr(
                         "that is Pre-LN, x + Sublayer(LayerNorm(x)); the paper (and this "
                         "exercise) is Post-LN: LayerNorm(x + Sublayer(x))",
                         "这是 Pre-LN，x + Sublayer(LayerNorm(x))；论文（以及这道练习）用的是 "
                         "Post-LN：LayerNorm(x + Sublayer(x))")),
                     (theirs(x), tr("the mask was not passed to the self-attention",
                                    "掩码没有传给自注意力"))])


@enc.check("EncoderLayer applies dropout in train mode, and none in eval mode",
           zh="EncoderLayer 在训练模式下做 Dropout，在 eval 模式下不做")
def _(mod, rng):
    B, d_model, mine, theirs = encoder_pair(mod, rng, dropout=0.5)
    x = tensor(rng, B, 6, d_model)
    mine.train()
    if torch.allclose(mine(x), mine(x)):
        raise CheckFailed(tr("two train-mode calls to differ (dropout=0.5)",
                             "训练模式下两次调用的结果不同（dropout=0.5）"),
                          tr("identical outputs", "两次输出完全相同"),
                          tr("apply self.dropout to each sub-layer's output before the residual "
                             "add", "在残差相加之前，对每个子层的输出用 self.dropout"))
    mine.eval()
    expect_close(mine(x), theirs(x), tr("EncoderLayer(x) in eval mode",
                                        "eval 模式下的 EncoderLayer(x)"), tr(
        "use nn.Dropout (it is the identity in eval mode), not F.dropout with training=True",
        "用 nn.Dropout（它在 eval 模式下是恒等映射），不要用 training=True 的 F.dropout"))


OWN_NORM = "LayerNorm is written here: not nn.LayerNorm"


@enc.check(OWN_NORM, zh="LayerNorm 由你自己实现：不是 nn.LayerNorm")
def _(mod, rng):
    found = modules_of_type(build(mod, "LayerNorm", int(rng.integers(6, 13))), (nn.LayerNorm,))
    if found:
        raise CheckFailed(tr("a LayerNorm of your own", "你自己实现的 LayerNorm"),
                          tr(", ", "、").join(found),
                          tr("writing LayerNorm is this stage: nn.Module with weight and bias "
                             "parameters, and forward computing (x - mean) / sqrt(var + eps) * "
                             "weight + bias over the last axis",
                             "这一步就是要自己写 LayerNorm：一个带 `weight` 和 `bias` 参数的 "
                             "nn.Module，`forward` 在最后一维上计算 (x - mean) / sqrt(var + eps) * "
                             "weight + bias"))


enc.keeps({
    "LayerNorm: attributes": "LayerNorm: weight = ones, bias = zeros, shape (d_model,); eps = 1e-5",
    "LayerNorm: value": ("LayerNorm equals nn.LayerNorm on ordinary inputs",
                         "LayerNorm divides by √(variance + eps), not std + eps (inputs of tiny "
                         "variance)"),
    "LayerNorm: own-norm": OWN_NORM,
    "FeedForward: value": "FeedForward: w_2(relu(w_1(x))) with w_1 (d_model -> d_ff), w_2 "
                          "(d_ff -> d_model)",
    "EncoderLayer: attributes": "EncoderLayer has self_attn, ffn, norm1, norm2 with the "
                                "course's parameter names",
    "EncoderLayer: post-ln": "EncoderLayer equals the course's Post-LN layer, with a padding mask",
    "EncoderLayer: dropout": "EncoderLayer applies dropout in train mode, and none in eval mode",
})

# Stage 6 -----------------------------------------------------------------------------------
dec = exercise("from_scratch/decoder_layer", FILE,
               "stage 6: decoder layer: masked self-attention, cross-attention, FFN",
               zh="第 6 步：解码器层：带掩码的自注意力、交叉注意力、前馈网络")


def decoder_pair(mod, rng):
    B, H, _, d_model = head_dims(rng)
    theirs = DecoderLayer(d_model, H, 2 * d_model, dropout=0.0).double().eval()
    mine = build(mod, "DecoderLayer", d_model, H, 2 * d_model, dropout=0.0)
    copy_weights(mine, theirs)
    T_tgt, T_src = int(rng.integers(3, 7)), int(rng.integers(3, 7)) + 1
    return mine, theirs, tensor(rng, B, T_tgt, d_model), tensor(rng, B, T_src, d_model)


def cross_attends_to_itself(layer, x, tgt_mask):
    x = layer.norm1(x + layer.self_attn(x, x, x, tgt_mask)[0])
    x = layer.norm2(x + layer.cross_attn(x, x, x)[0])
    return layer.norm3(x + layer.ffn(x))


@dec.check("DecoderLayer has self_attn, cross_attn, ffn, norm1-3 with the course's names",
           zh="DecoderLayer 有 self_attn、cross_attn、ffn、norm1-3，名字与课程的实现相同")
def _(mod, rng):
    decoder_pair(mod, rng)


@dec.check("cross-attention takes its keys and values from the encoder output (memory)",
           zh="交叉注意力的键和值来自编码器的输出（memory）")
def _(mod, rng):
    mine, theirs, x, memory = decoder_pair(mod, rng)
    causal = course_masks.causal_mask(x.shape[1])
    expect_close(mine(x, memory, None, causal), theirs(x, memory, None, causal),
                 "DecoderLayer(x, memory)", tr(
                     "self-attention, then cross_attn(x, memory, memory), then the FFN, each "
                     "Post-LN", "先做自注意力，再做 cross_attn(x, memory, memory)，最后过前馈网络，"
                     "每一步都是 Post-LN"),
                 [(cross_attends_to_itself(theirs, x, causal), tr(
                     "the cross-attention attends to the decoder's own states: its keys and "
                     "values are `memory`, the encoder output; only the queries come from the "
                     "decoder", "交叉注意力关注的是解码器自己的状态：它的键和值应是编码器的输出 "
                     "`memory`；只有查询来自解码器"))])


@dec.check("DecoderLayer equals the course's Post-LN layer, with target and source masks",
           zh="带目标掩码和源掩码时，DecoderLayer 与课程的 Post-LN 层一致")
def _(mod, rng):
    mine, theirs, x, memory = decoder_pair(mod, rng)
    B, T_tgt, T_src = x.shape[0], x.shape[1], memory.shape[1]
    tgt_mask = course_masks.target_mask(token_ids(rng, B, T_tgt, 9, 0), 0)
    src = token_ids(rng, B, T_src, 9, 0)
    src[1, -1] = 0  # at least one padded source key, whatever the draw
    src_mask = course_masks.padding_mask(src, 0)
    pre_ln = DecoderLayer(x.shape[2], theirs.self_attn.num_heads, 2 * x.shape[2], 0.0, True)
    pre_ln.double().eval().load_state_dict(theirs.state_dict())
    expect_close(mine(x, memory, src_mask, tgt_mask), theirs(x, memory, src_mask, tgt_mask),
                 "DecoderLayer(x, memory, src_mask, tgt_mask)", tr(
                     "self_attn gets tgt_mask, cross_attn gets src_mask",
                     "self_attn 用 tgt_mask，cross_attn 用 src_mask"), [
                     (pre_ln(x, memory, src_mask, tgt_mask), tr(
                         "that is Pre-LN; the paper is Post-LN: LayerNorm(x + Sublayer(x))",
                         "这是 Pre-LN；论文用的是 Post-LN：LayerNorm(x + Sublayer(x))")),
                     (theirs(x, memory, None, tgt_mask), tr(
                         "src_mask was not passed to the cross-attention: the decoder attends "
                         "to source padding", "src_mask 没有传给交叉注意力：解码器关注到了源句的"
                         "填充"))])


@dec.check("masked self-attention: a later target position changes no earlier output",
           zh="带掩码的自注意力：改动靠后的目标位置，不影响前面任何位置的输出")
def _(mod, rng):
    mine, _, x, memory = decoder_pair(mod, rng)
    T = x.shape[1]
    t = int(rng.integers(1, T))
    changed = x.clone()
    changed[:, t] = tensor(rng, x.shape[0], x.shape[2])
    causal = course_masks.causal_mask(T)
    before, after = mine(x, memory, None, causal), mine(changed, memory, None, causal)
    if not torch.allclose(before[:, :t], after[:, :t], atol=1e-12, rtol=0):
        raise CheckFailed(tr(f"outputs at positions < {t} unchanged when position {t} changes",
                             f"位置 {t} 改变时，位置 < {t} 的输出不变"),
                          tr("they changed: the decoder sees the future",
                             "它们变了：解码器看到了未来"),
                          tr("pass tgt_mask to the self-attention (not to the cross-attention)",
                             "把 tgt_mask 传给自注意力（不是交叉注意力）"))


dec.keeps({
    "DecoderLayer: attributes": "DecoderLayer has self_attn, cross_attn, ffn, norm1-3 with the "
                                "course's names",
    "DecoderLayer: cross": "cross-attention takes its keys and values from the encoder output "
                           "(memory)",
    "DecoderLayer: post-ln": ("DecoderLayer equals the course's Post-LN layer, with target and "
                              "source masks",
                              "masked self-attention: a later target position changes no "
                              "earlier output"),
})
