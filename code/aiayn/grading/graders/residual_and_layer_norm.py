"""Grader of the chapter "Residual connections and layer normalisation": LayerNorm in NumPy,
checked against ``aiayn.np.normalization.LayerNorm`` (random gain and bias) and
``torch.nn.functional.layer_norm``, on random shapes whose batch, time and feature sizes differ
so that a wrong axis cannot hide, and on small activations where ``std + eps`` shows."""

import numpy as np
import torch

from ...np.normalization import LayerNorm
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape, raised
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("residual_and_layer_norm/layer_norm", "residual_and_layer_norm/layer_norm.py",
              "LayerNorm over the features: (x - mean) / sqrt(var + eps) * weight + bias",
              zh="在特征上做 LayerNorm：(x - mean) / sqrt(var + eps) * weight + bias")

UNBIASED = Text("you used the unbiased variance (divided by d_model - 1, e.g. np.var(..., ddof=1) "
                "or torch.var's default): LayerNorm uses the biased one, the mean of "
                "(x - mean)^2",
                "你用了无偏方差（除以 d_model - 1，例如 np.var(..., ddof=1)，或 torch.var 的默认"
                "做法）：LayerNorm 用的是有偏方差，即 (x - mean)^2 的均值")
STD_EPS = Text("you divided by (std + eps): the paper's LayerNorm (and nn.LayerNorm) divides by "
               "sqrt(var + eps), with eps inside the root; the two differ most for small "
               "activations",
               "你除的是 (std + eps)：论文的 LayerNorm（以及 nn.LayerNorm）除以 sqrt(var + eps)，"
               "eps 在根号里面；激活值很小时两者差得最多")
BATCH_AXIS = Text("you normalised over the batch axis (axis 0), which is BatchNorm's axis: "
                  "LayerNorm normalises each position over its own features, the LAST axis "
                  "(axis=-1, keepdims=True)",
                  "你在批次维（axis 0）上做了归一化，这是 BatchNorm 的做法：LayerNorm 对每个位置"
                  "在它自己的特征上归一化，也就是最后一维（axis=-1, keepdims=True）")
TIME_AXIS = Text("you normalised over the time axis (axis 1): LayerNorm normalises each position "
                 "over its features, the LAST axis (axis=-1, keepdims=True)",
                 "你在时间维（axis 1）上做了归一化：LayerNorm 对每个位置在它的特征上归一化，也就是"
                 "最后一维（axis=-1, keepdims=True）")
AFFINE = Text("multiply by weight and add bias after normalising: (x - mean) / sqrt(var + eps) "
              "* weight + bias",
              "归一化之后还要乘以 `weight`、加上 `bias`：(x - mean) / sqrt(var + eps) * weight + bias")
FORMULA = "(x - mean) / sqrt(var + eps) * weight + bias"


def setup(rng, scale=1.0):
    B, T = int(rng.integers(2, 5)), int(rng.integers(5, 9))
    d = T + int(rng.integers(2, 6))  # B != T != d: each axis has its own size
    x = (rng.standard_normal((B, T, d)) + rng.standard_normal((B, T, 1))) * scale
    norm = LayerNorm(d)
    norm.weight, norm.bias = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
    return x, norm


def mistakes(x, norm):
    w, b, eps = norm.weight, norm.bias, norm.eps

    def over(axis, ddof=0, std_eps=False):
        mean = x.mean(axis=axis, keepdims=True)
        if std_eps:
            return (x - mean) / (x.std(axis=axis, keepdims=True, ddof=ddof) + eps) * w + b
        return (x - mean) / np.sqrt(x.var(axis=axis, keepdims=True, ddof=ddof) + eps) * w + b

    plain = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    return [(over(-1, ddof=1), UNBIASED), (over(-1, std_eps=True), STD_EPS),
            (over(-1, ddof=1, std_eps=True), STD_EPS + Text("; and ", "；而且") + UNBIASED),
            (over(0), BATCH_AXIS), (over(1), TIME_AXIS), (plain, AFFINE)]


def call(mod, x, norm):
    return need(mod, "layer_norm")(x.copy(), norm.weight.copy(), norm.bias.copy(), norm.eps)


@ex.check("shape of x; equals the course's LayerNorm on (B, T, d_model)",
          zh="形状与 x 相同；在 (B, T, d_model) 上与课程的 LayerNorm 一致")
def _(mod, rng):
    x, norm = setup(rng)
    got = call(mod, x, norm)
    expect_array(got, "numpy", "output")
    expect_shape(got, x.shape, "output", tr("LayerNorm returns one value per input value",
                                            "LayerNorm 对每个输入值返回一个值"))
    expect_close(got, norm(x), "output", tr(
        "(x - mean) / sqrt(var + eps) * weight + bias, mean and var over the last axis",
        "(x - mean) / sqrt(var + eps) * weight + bias，均值和方差都沿最后一维计算"),
        mistakes(x, norm))


@ex.check("equals torch.nn.functional.layer_norm on small activations (std ~ 1e-3)",
          zh="在很小的激活值上（std ~ 1e-3）与 torch.nn.functional.layer_norm 一致")
def _(mod, rng):
    x, norm = setup(rng, scale=1e-3)
    want = torch.nn.functional.layer_norm(
        torch.from_numpy(x), (x.shape[-1],), torch.from_numpy(norm.weight),
        torch.from_numpy(norm.bias), norm.eps).numpy()
    expect_close(call(mod, x, norm), want, "output", tr(
        "eps belongs inside the square root: sqrt(var + eps)", "eps 在根号里面：sqrt(var + eps)"),
        mistakes(x, norm), atol=1e-9)


@ex.check("one position's output depends on that position only",
          zh="一个位置的输出只取决于这个位置本身")
def _(mod, rng):
    x, norm = setup(rng)
    alone = call(mod, x[:1, :1], norm)
    # Statistics over an axis of size 1 (batch or time) make x - mean = 0: the output is the bias.
    expect_close(alone, norm(x[:1, :1]), tr("a single position, normalised alone",
                                            "单独归一化的一个位置"),
                 tr("normalise over the features, the last axis (axis=-1, keepdims=True)",
                    "在特征上，也就是最后一维上归一化（axis=-1, keepdims=True）"),
                 [(np.broadcast_to(norm.bias, alone.shape), Text(
                     "every value came out as the bias: you took mean and variance over an axis "
                     "of size 1 here (batch or time), so x - mean = 0. ",
                     "每个值都等于 bias：你在一个长度为 1 的维（批次维或时间维）上求均值和方差，于是 "
                     "x - mean = 0。") + BATCH_AXIS)], atol=1e-10)
    expect_close(call(mod, x, norm)[:1, :1], alone, tr(
        "position (0, 0) in its batch vs alone", "位置 (0, 0) 在整个批次中与单独计算的结果"), tr(
        "the other sentences and positions must not change a position's output, unlike "
        "BatchNorm: normalise over the last axis only",
        "其他句子和位置不能改变一个位置的输出，这一点与 BatchNorm 不同：只在最后一维上归一化"),
        atol=1e-10)


@ex.check("works for any number of leading axes, e.g. (T, d_model)",
          zh="前面有几维都能算，例如 (T, d_model)")
def _(mod, rng):
    x, norm = setup(rng)
    hint = tr("use axis=-1, not a fixed axis number, so the same code handles (T, d_model) and "
              "(B, T, d_model)", "用 axis=-1，不要写死某一维的编号，这样同一段代码既能处理 "
              "(T, d_model)，也能处理 (B, T, d_model)")
    try:
        got = call(mod, x[0], norm)
    except (ValueError, IndexError) as error:  # AxisError: a fixed axis number 2
        raise CheckFailed(tr("an output for a 2-D input (T, d_model)",
                             "对二维输入 (T, d_model) 也能给出输出"), raised(error),
                          hint) from None
    expect_close(got, norm(x[0]), tr("output for a 2-D input", "二维输入的输出"), hint)


UNCHANGED = "leaves x unchanged"


@ex.check(UNCHANGED, zh="不修改 x")
def _(mod, rng):
    x, norm = setup(rng)
    got = call_on_read_only(need(mod, "layer_norm"), {
        "x": x, "weight": norm.weight, "bias": norm.bias, "eps": norm.eps}, tr(
        "the caller (the residual stream) still needs x: compute into new arrays, "
        "centred = x - mean, instead of x -= mean or x /= std",
        "调用者（残差通路）还要用 x：请把结果算进新数组，centred = x - mean，不要写 x -= mean "
        "或 x /= std"))
    expect_close(got, norm(x), "output", FORMULA, mistakes(x, norm))


ex.keeps({
    "layer_norm: value": ("shape of x; equals the course's LayerNorm on (B, T, d_model)",
                          "equals torch.nn.functional.layer_norm on small activations (std ~ "
                          "1e-3)", "one position's output depends on that position only"),
    "layer_norm: leading-axes": "works for any number of leading axes, e.g. (T, d_model)",
    "layer_norm: input-unchanged": UNCHANGED,
})
