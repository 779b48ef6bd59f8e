"""Grader of the chapter "Architecture overview": the residual wrapper of every sub-layer,
Post-LN (the paper) and Pre-LN, checked against ``aiayn.np.encoder.residual`` with a real
LayerNorm (random gain and bias) and a random linear sub-layer. Dropout is replaced by a
visible stand-in (a scaling) so that where it is applied shows in the numbers."""

import numpy as np

from ...np.encoder import residual as course_residual
from ...np.normalization import LayerNorm
from ..compare import expect_array, expect_close, expect_shape
from ..core import exercise, need
from ..language import Text, tr

ex = exercise("architecture_overview/residual", "architecture_overview/residual.py",
              "the residual wrapper: Post-LN LayerNorm(x + Dropout(Sublayer(x))) and Pre-LN",
              zh="残差包装：Post-LN 的 LayerNorm(x + Dropout(Sublayer(x))) 与 Pre-LN")

PRE_FOR_POST = Text("you computed Pre-LN, x + Dropout(Sublayer(LayerNorm(x))), where Post-LN was "
                    "asked (norm_first=False): the paper normalises the SUM, "
                    "LayerNorm(x + Dropout(Sublayer(x)))",
                    "题目要的是 Post-LN（norm_first=False），你算的却是 Pre-LN，即 "
                    "x + Dropout(Sublayer(LayerNorm(x)))：论文归一化的是相加之后的和，"
                    "LayerNorm(x + Dropout(Sublayer(x)))")
POST_FOR_PRE = Text("you computed Post-LN, LayerNorm(x + Dropout(Sublayer(x))), where Pre-LN was "
                    "asked (norm_first=True): Pre-LN normalises the sub-layer's INPUT and leaves "
                    "the residual stream alone, x + Dropout(Sublayer(LayerNorm(x)))",
                    "题目要的是 Pre-LN（norm_first=True），你算的却是 Post-LN，即 "
                    "LayerNorm(x + Dropout(Sublayer(x)))：Pre-LN 归一化的是子层的输入，残差"
                    "通路保持不动，x + Dropout(Sublayer(LayerNorm(x)))")
NORM_BEFORE_ADD = Text("you normalised x before adding the sub-layer's output, LayerNorm(x) + "
                       "Sublayer(x): Post-LN normalises after the addition, LayerNorm(x + ...)",
                       "你在加上子层输出之前就归一化了 x，算成了 LayerNorm(x) + Sublayer(x)："
                       "Post-LN 是先相加再归一化，LayerNorm(x + ...)")
DROPOUT_PLACE = Text("dropout acts on the sub-layer's output only, before the addition (§5.4: "
                     "'apply dropout to the output of each sub-layer, before it is added to the "
                     "sub-layer input'); not on x, not on the sum, and not left out",
                     "Dropout 只作用在子层的输出上，而且在相加之前（§5.4：对每个子层的输出先做 "
                     "Dropout，再与子层的输入相加）；不作用在 x 上，也不作用在和上，更不能省掉")
RAW_X = Text("the residual adds the raw x, not LayerNorm(x): x + Dropout(Sublayer(LayerNorm(x)))",
             "残差加的是原始的 x，不是 LayerNorm(x)：x + Dropout(Sublayer(LayerNorm(x)))")


def setup(rng):
    B, T, d = int(rng.integers(2, 4)), int(rng.integers(3, 7)), int(rng.integers(6, 12))
    x = rng.standard_normal((B, T, d)) * 2.0 + 1.0  # not already normalised
    norm = LayerNorm(d)
    norm.weight, norm.bias = rng.standard_normal(d), rng.standard_normal(d)
    w, b = rng.standard_normal((d, d)) / np.sqrt(d), rng.standard_normal(d)
    sublayer = lambda h: np.tanh(h @ w + b)  # noqa: E731 (any (B, T, d) -> (B, T, d) map)
    return x, sublayer, norm


def wrong(x, sublayer, norm, dropout, norm_first):
    """What the classic slips return for these inputs."""
    found = [(course_residual(x, sublayer, norm, dropout, not norm_first),
              POST_FOR_PRE if norm_first else PRE_FOR_POST)]
    if norm_first:
        found += [(x + sublayer(norm(x)), DROPOUT_PLACE),
                  (dropout(x + sublayer(norm(x))), DROPOUT_PLACE),
                  (norm(x) + dropout(sublayer(norm(x))), RAW_X)]
    else:
        found += [(norm(x) + dropout(sublayer(x)), NORM_BEFORE_ADD),
                  (norm(x + sublayer(x)), DROPOUT_PLACE),
                  (norm(dropout(x + sublayer(x))), DROPOUT_PLACE),
                  (norm(dropout(x) + sublayer(x)), DROPOUT_PLACE)]
    return found


def residual_check(norm_first: bool, visible_dropout: bool):
    formula = ("x + Dropout(Sublayer(LayerNorm(x)))" if norm_first
               else "LayerNorm(x + Dropout(Sublayer(x)))")

    def check(mod, rng):
        x, sublayer, norm = setup(rng)
        dropout = (lambda h: 0.5 * h) if visible_dropout else (lambda h: h)  # noqa: E731
        got = need(mod, "residual")(x.copy(), sublayer, norm, dropout, norm_first)
        want = course_residual(x, sublayer, norm, dropout, norm_first)
        expect_array(got, "numpy", "output")
        expect_shape(got, want.shape, "output", tr("the residual keeps the shape (B, T, d_model)",
                                                   "残差连接保持形状 (B, T, d_model) 不变"))
        expect_close(got, want, "output", f"norm_first={norm_first}: {formula}",
                     wrong(x, sublayer, norm, dropout, norm_first))
    return check


ex.check("Post-LN (norm_first=False): LayerNorm(x + Sublayer(x)), dropout as identity",
         zh="Post-LN（norm_first=False）：LayerNorm(x + Sublayer(x))，Dropout 取恒等映射")(
    residual_check(False, False))
ex.check("Pre-LN (norm_first=True): x + Sublayer(LayerNorm(x)), dropout as identity",
         zh="Pre-LN（norm_first=True）：x + Sublayer(LayerNorm(x))，Dropout 取恒等映射")(
    residual_check(True, False))
ex.check("Post-LN: dropout acts on the sub-layer's output, before the addition",
         zh="Post-LN：Dropout 作用在子层的输出上，在相加之前")(
    residual_check(False, True))
ex.check("Pre-LN: dropout acts on the sub-layer's output, before the addition",
         zh="Pre-LN：Dropout 作用在子层的输出上，在相加之前")(
    residual_check(True, True))


GIVEN = "calls the norm, sublayer and dropout it is given, whatever they compute"
OWN_NORM = Text("you normalised with a formula of your own: call `norm`, the function given (the "
                "layer's LayerNorm, with its own gain and bias); the grader passes functions "
                "that are not a LayerNorm at all, and yours must use them as they are",
                "你用了自己写的归一化公式：请调用传入的函数 `norm`（层自己的 LayerNorm，带有自己的"
                "增益和偏置）；评分程序传入的函数根本不是 LayerNorm，你的代码要原样使用它们")


def own_layer_norm(h):
    return (h - h.mean(-1, keepdims=True)) / np.sqrt(h.var(-1, keepdims=True) + 1e-5)


@ex.check(GIVEN, zh="调用传入的 `norm`、`sublayer` 和 `dropout`，不论它们计算什么")
def _(mod, rng):
    x, sublayer, _ = setup(rng)
    norm, dropout = (lambda h: 0.5 * h + 1.0), (lambda h: 0.8 * h)  # noqa: E731 (not LN)
    for norm_first in (False, True):
        got = need(mod, "residual")(x.copy(), sublayer, norm, dropout, norm_first)
        want = course_residual(x, sublayer, norm, dropout, norm_first)
        own = [(course_residual(x, sublayer, own_layer_norm, d, norm_first), OWN_NORM)
               for d in (dropout, lambda h: h)]
        expect_close(got, want, tr(f"output (norm_first={norm_first}) with norm(h) = 0.5 h + 1 "
                                   "and dropout(h) = 0.8 h", "norm(h) = 0.5 h + 1、"
                                   f"dropout(h) = 0.8 h 时的输出（norm_first={norm_first}）"),
                     tr("call the three functions given, in the order of the formula",
                        "按公式的顺序调用传入的三个函数"),
                     own + wrong(x, sublayer, norm, dropout, norm_first))


POST = "Post-LN (norm_first=False): LayerNorm(x + Sublayer(x)), dropout as identity"
PRE = "Pre-LN (norm_first=True): x + Sublayer(LayerNorm(x)), dropout as identity"
POST_DROPOUT = "Post-LN: dropout acts on the sub-layer's output, before the addition"
PRE_DROPOUT = "Pre-LN: dropout acts on the sub-layer's output, before the addition"
ex.keeps({
    "residual: post-ln": (POST, POST_DROPOUT),
    "residual: pre-ln": (PRE, PRE_DROPOUT),
    "residual: dropout": (POST_DROPOUT, PRE_DROPOUT),
    "residual: given-functions": GIVEN,
})
