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
from ..language import tr
from ._modules import build, copy_weights, head_dims, tensor, token_ids

FILE = "from_scratch/transformer.py"

# Stage 5 -----------------------------------------------------------------------------------
enc = exercise("from_scratch/encoder_layer", FILE,
               "stage 5: LayerNorm, feed-forward network and the (Post-LN) encoder layer")

STD_EPS_HINT = ("you divided by (std + eps): LayerNorm divides by sqrt(variance + eps), as "
                "nn.LayerNorm does. The two differ most when the variance is small, as here "
                "(about 1e-6, against eps = 1e-5)")
UNBIASED_HINT = ("you used the unbiased variance (divides by d_model - 1; torch.var's and "
                 "x.std()'s default). LayerNorm uses the biased one: x.var(-1, unbiased=False)")


def layer_norm_mistakes(x, weight, bias, eps):
    """What the classic LayerNorm slips return on ``x`` (float64 NumPy)."""
    x, w, b = as_numpy(x), as_numpy(weight), as_numpy(bias)
    c = x - x.mean(-1, keepdims=True)
    var, var_unbiased = x.var(-1, keepdims=True), x.var(-1, ddof=1, keepdims=True)
    over_time = (x - x.mean(-2, keepdims=True)) / np.sqrt(x.var(-2, keepdims=True) + eps)
    return [(c / (np.sqrt(var) + eps) * w + b, STD_EPS_HINT),
            (c / (np.sqrt(var_unbiased) + eps) * w + b, STD_EPS_HINT),
            (c / np.sqrt(var_unbiased + eps) * w + b, UNBIASED_HINT),
            (c / np.sqrt(var) * w + b, "eps is missing: sqrt(variance + eps) keeps a constant "
             "input from dividing by zero"),
            (over_time * w + b, "normalise over the LAST axis (the d_model features of each "
             "token), not over the positions"),
            (c / np.sqrt(var + eps), "the learnable weight (gain) and bias are not applied: "
             "... * self.weight + self.bias")]


def layer_norms(mod, rng):
    d_model = int(rng.integers(6, 13))
    theirs = LayerNorm(d_model).double()
    with torch.no_grad():  # random gain and bias, so forgetting them shows
        theirs.weight.copy_(tensor(rng, d_model, scale=0.5) + 1.0)
        theirs.bias.copy_(tensor(rng, d_model, scale=0.5))
    mine = build(mod, "LayerNorm", d_model)
    copy_weights(mine, theirs)
    return d_model, mine, theirs


@enc.check("LayerNorm: weight = ones, bias = zeros, shape (d_model,); eps = 1e-5")
def _(mod, rng):
    d_model = int(rng.integers(6, 13))
    mine = build(mod, "LayerNorm", d_model)
    copy_weights(mine, LayerNorm(d_model).double())  # names and shapes
    fresh = build(mod, "LayerNorm", d_model)
    if not (torch.all(fresh.weight == 1) and torch.all(fresh.bias == 0)):
        raise CheckFailed("weight = ones and bias = zeros at initialisation", "other values",
                          "start as the identity map: nn.Parameter(torch.ones(d_model)) and "
                          "nn.Parameter(torch.zeros(d_model))")
    if getattr(fresh, "eps", None) != 1e-5:
        raise CheckFailed("eps = 1e-5 (the default of nn.LayerNorm)",
                          f"eps = {getattr(fresh, 'eps', 'missing')}", "store eps: self.eps = eps")


@enc.check("LayerNorm equals nn.LayerNorm on ordinary inputs")
def _(mod, rng):
    d_model, mine, theirs = layer_norms(mod, rng)
    x = tensor(rng, 2, 5, d_model, scale=2.0) + 1.0
    expect_close(mine(x), theirs(x), "LayerNorm(x)", "(x - mean) / sqrt(var + eps) * weight + "
                 "bias over the last axis", layer_norm_mistakes(x, theirs.weight, theirs.bias,
                                                                theirs.eps))


@enc.check("LayerNorm divides by √(variance + eps), not std + eps (inputs of tiny variance)")
def _(mod, rng):
    d_model, mine, theirs = layer_norms(mod, rng)
    x = tensor(rng, 2, 5, d_model, scale=1e-3) + tensor(rng, 2, 5, 1)  # variance ~ 1e-6 ~ eps
    expect_close(mine(x), theirs(x), "LayerNorm(x)", "divide by torch.sqrt(var + self.eps)",
                 layer_norm_mistakes(x, theirs.weight, theirs.bias, theirs.eps), rtol=1e-7)


@enc.check("FeedForward: w_2(relu(w_1(x))) with w_1 (d_model -> d_ff), w_2 (d_ff -> d_model)")
def _(mod, rng):
    d_model, d_ff = int(rng.integers(4, 9)), int(rng.integers(10, 17))
    theirs = PositionwiseFeedForward(d_model, d_ff).double()
    mine = build(mod, "FeedForward", d_model, d_ff)
    copy_weights(mine, theirs)
    x = tensor(rng, 2, 5, d_model)
    expect_close(mine(x), theirs(x), "FFN(x)", "max(0, x W_1 + b_1) W_2 + b_2", [
        (theirs.w_2(theirs.w_1(x)), "the ReLU is missing: without it the two linear maps "
         "collapse into one"),
        (torch.relu(theirs(x)), "the ReLU goes between w_1 and w_2, not after w_2"),
        (torch.relu(theirs.w_2(theirs.w_1(x))), "the ReLU goes between w_1 and w_2, not after "
         "w_2")])


def encoder_pair(mod, rng, dropout=0.0):
    B, H, _, d_model = head_dims(rng)
    d_ff = 2 * d_model
    theirs = EncoderLayer(d_model, H, d_ff, dropout=0.0).double().eval()
    mine = build(mod, "EncoderLayer", d_model, H, d_ff, dropout=dropout)
    copy_weights(mine, theirs)
    return B, d_model, mine, theirs


@enc.check("EncoderLayer has self_attn, ffn, norm1, norm2 with the course's parameter names")
def _(mod, rng):
    encoder_pair(mod, rng)


@enc.check("EncoderLayer equals the course's Post-LN layer, with a padding mask")
def _(mod, rng):
    B, d_model, mine, theirs = encoder_pair(mod, rng)
    T = int(rng.integers(4, 8))
    x, mask = tensor(rng, B, T, d_model), course_masks.padding_mask(token_ids(rng, B, T, 9, 0), 0)
    pre_ln = EncoderLayer(d_model, theirs.self_attn.num_heads, 2 * d_model, 0.0, norm_first=True)
    pre_ln.double().eval().load_state_dict(theirs.state_dict())
    expect_close(mine(x, mask), theirs(x, mask), "EncoderLayer(x, mask)",
                 "x = norm1(x + dropout(self_attn(x, x, x, mask))); "
                 "x = norm2(x + dropout(ffn(x)))", [
                     (pre_ln(x, mask), "that is Pre-LN, x + Sublayer(LayerNorm(x)); the paper "
                      "(and this exercise) is Post-LN: LayerNorm(x + Sublayer(x))"),
                     (theirs(x), "the mask was not passed to the self-attention")])


@enc.check("EncoderLayer applies dropout in train mode, and none in eval mode")
def _(mod, rng):
    B, d_model, mine, theirs = encoder_pair(mod, rng, dropout=0.5)
    x = tensor(rng, B, 6, d_model)
    mine.train()
    if torch.allclose(mine(x), mine(x)):
        raise CheckFailed("two train-mode calls to differ (dropout=0.5)", "identical outputs",
                          "apply self.dropout to each sub-layer's output before the residual add")
    mine.eval()
    expect_close(mine(x), theirs(x), "EncoderLayer(x) in eval mode", "use nn.Dropout (it is "
                 "the identity in eval mode), not F.dropout with training=True")


OWN_NORM = "LayerNorm is written here: not nn.LayerNorm"


@enc.check(OWN_NORM, zh="LayerNorm 由你自己实现：不是 nn.LayerNorm")
def _(mod, rng):
    found = modules_of_type(build(mod, "LayerNorm", int(rng.integers(6, 13))), (nn.LayerNorm,))
    if found:
        raise CheckFailed(tr("a LayerNorm of your own", "你自己实现的 LayerNorm"),
                          ", ".join(found),
                          tr("writing LayerNorm is this stage: nn.Module with weight and bias "
                             "parameters, and forward computing (x - mean) / sqrt(var + eps) * "
                             "weight + bias over the last axis",
                             "这一步就是要自己写 LayerNorm：一个带 weight 和 bias 参数的 "
                             "nn.Module，forward 在最后一维上计算 (x - mean) / sqrt(var + eps) * "
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
               "stage 6: decoder layer: masked self-attention, cross-attention, FFN")


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


@dec.check("DecoderLayer has self_attn, cross_attn, ffn, norm1-3 with the course's names")
def _(mod, rng):
    decoder_pair(mod, rng)


@dec.check("cross-attention takes its keys and values from the encoder output (memory)")
def _(mod, rng):
    mine, theirs, x, memory = decoder_pair(mod, rng)
    causal = course_masks.causal_mask(x.shape[1])
    expect_close(mine(x, memory, None, causal), theirs(x, memory, None, causal),
                 "DecoderLayer(x, memory)", "self-attention, then cross_attn(x, memory, memory), "
                 "then the FFN, each Post-LN",
                 [(cross_attends_to_itself(theirs, x, causal), "the cross-attention attends to "
                   "the decoder's own states: its keys and values are `memory`, the encoder "
                   "output; only the queries come from the decoder")])


@dec.check("DecoderLayer equals the course's Post-LN layer, with target and source masks")
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
                 "DecoderLayer(x, memory, src_mask, tgt_mask)", "self_attn gets tgt_mask, "
                 "cross_attn gets src_mask", [
                     (pre_ln(x, memory, src_mask, tgt_mask), "that is Pre-LN; the paper is "
                      "Post-LN: LayerNorm(x + Sublayer(x))"),
                     (theirs(x, memory, None, tgt_mask), "src_mask was not passed to the "
                      "cross-attention: the decoder attends to source padding")])


@dec.check("masked self-attention: a later target position changes no earlier output")
def _(mod, rng):
    mine, _, x, memory = decoder_pair(mod, rng)
    T = x.shape[1]
    t = int(rng.integers(1, T))
    changed = x.clone()
    changed[:, t] = tensor(rng, x.shape[0], x.shape[2])
    causal = course_masks.causal_mask(T)
    before, after = mine(x, memory, None, causal), mine(changed, memory, None, causal)
    if not torch.allclose(before[:, :t], after[:, :t], atol=1e-12, rtol=0):
        raise CheckFailed(f"outputs at positions < {t} unchanged when position {t} changes",
                          "they changed: the decoder sees the future",
                          "pass tgt_mask to the self-attention (not to the cross-attention)")


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
