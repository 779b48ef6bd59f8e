"""Grader of the chapter "The copy task": GNMT's length penalty and the normalised score of
beam search, checked against ``aiayn.inference.beam_search.length_penalty`` on random lengths
and alphas (the paper's 0.6, and 0, which must give 1). Values are compared, not rankings: a
penalty off by a constant factor ranks hypotheses of one alpha the same way and is still wrong."""

import numpy as np

from ...inference.beam_search import length_penalty as course_penalty
from ..compare import expect_close, raised
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("copy_task/length_penalty", "copy_task/length_penalty.py",
              "GNMT length penalty ((5 + |Y|) / 6)^alpha and the score log P / lp",
              zh="GNMT 的长度惩罚 ((5 + |Y|) / 6)^alpha 与得分 log P / lp")

NO_SIX = Text("you left out the division by 6: (5 + |Y|) ** alpha is ((5 + |Y|) / 6) ** alpha "
              "times 6 ** alpha, a constant factor. It ranks the hypotheses of one alpha the "
              "same way, so a test of rankings would miss it, but lp(1) must be 1 and the scores "
              "(which beam search reports and compares with each other at one alpha) are off "
              "by 6 ** alpha",
              "你漏了除以 6：(5 + |Y|) ** alpha 等于 ((5 + |Y|) / 6) ** alpha 乘以常数因子 "
              "6 ** alpha。同一个 alpha 下，它给各个候选排出的顺序不变，所以只比较排序的测试发现"
              "不了；但 lp(1) 必须等于 1，而且得分（束搜索报告出来、在同一个 alpha 下互相比较的"
              "值）差了 6 ** alpha 倍")
TIMES_ALPHA = Text("alpha is an exponent: ((5 + |Y|) / 6) ** alpha, not ((5 + |Y|) / 6) * alpha",
                   "alpha 是指数：((5 + |Y|) / 6) ** alpha，不是 ((5 + |Y|) / 6) * alpha")
NO_FIVE = Text("the 5 is missing: GNMT's penalty is ((5 + |Y|) / 6) ** alpha; the 5 keeps the "
               "penalty of short outputs from changing too fast",
               "缺了 5：GNMT 的惩罚是 ((5 + |Y|) / 6) ** alpha；加上 5，短输出的惩罚才不会变得"
               "太快")
ONE_PLUS = Text("the constant is 5, not 1: ((5 + |Y|) / 6) ** alpha, which is 1 at |Y| = 1",
                "常数是 5，不是 1：((5 + |Y|) / 6) ** alpha，在 |Y| = 1 时等于 1")
TIMES_LP = Text("divide by the penalty: score = log P / lp. log P is negative, so dividing by "
                "lp >= 1 raises the score of long outputs; multiplying would punish them further",
                "要除以惩罚项：score = log P / lp。log P 是负数，除以 lp >= 1 会提高长输出的"
                "得分；乘上去反而会进一步惩罚它们")


def penalty_mistakes(L, a):
    return [((5.0 + L) ** a, NO_SIX), ((5.0 + L) / 6.0 * a, TIMES_ALPHA),
            ((L / 6.0) ** a, NO_FIVE), (((1.0 + L) / 6.0) ** a, ONE_PLUS)]


def cases(rng, n=8):
    """Random lengths 1..60 with random alphas, the paper's 0.6 among them."""
    lengths = rng.integers(1, 61, n)
    alphas = np.round(rng.uniform(0.1, 1.5, n), 3)
    alphas[0] = 0.6
    lengths[1] = max(int(lengths[1]), 2)  # a length above 1, where the /6 shows
    return [(int(L), float(a)) for L, a in zip(lengths, alphas)]


def as_float(value, what):
    try:
        return float(value)
    except (TypeError, ValueError):
        raise CheckFailed(tr(f"{what} as a number", f"{what} 返回一个数"), type(value).__name__,
                          tr("return a float (or a 0-d NumPy value) for a scalar input",
                             "标量输入要返回一个 float（或 0 维的 NumPy 值）")) from None


@ex.check("length_penalty equals ((5 + |Y|) / 6) ** alpha (values, not only the ranking)",
          zh="length_penalty 等于 ((5 + |Y|) / 6) ** alpha（比较数值，不只比较排序）")
def _(mod, rng):
    lp = need(mod, "length_penalty")
    for L, a in cases(rng):
        got = as_float(lp(L, a), "length_penalty")
        expect_close(np.array([got]), np.array([course_penalty(L, a)]),
                     f"length_penalty({L}, {a})", "((5 + length) / 6) ** alpha",
                     [(np.array([v]), h) for v, h in penalty_mistakes(L, a)], atol=1e-12)


@ex.check("alpha = 0 gives 1 for every length; length 1 gives 1 for every alpha",
          zh="alpha = 0 时任何长度都得 1；长度为 1 时任何 alpha 都得 1")
def _(mod, rng):
    lp = need(mod, "length_penalty")
    for L in rng.integers(1, 61, 4):
        expect_close(np.array([as_float(lp(int(L), 0.0), "length_penalty")]), np.array([1.0]),
                     f"length_penalty({int(L)}, 0.0)", tr(
                         "anything ** 0 is 1: alpha = 0 turns the penalty off and beam search "
                         "ranks by raw log-probabilities",
                         "任何数的 0 次方都是 1：alpha = 0 关掉了惩罚，束搜索直接按对数概率排序"),
                     atol=1e-12)
    a = float(np.round(rng.uniform(0.1, 1.5), 3))
    expect_close(np.array([as_float(lp(1, a), "length_penalty")]), np.array([1.0]),
                 f"length_penalty(1, {a})", tr("(5 + 1) / 6 = 1: one generated token is not "
                                               "penalised",
                                               "(5 + 1) / 6 = 1：只生成一个词元时不受惩罚"),
                 [(np.array([v]), h) for v, h in penalty_mistakes(1, a)], atol=1e-12)


@ex.check("normalised_score equals log P / lp, the score beam search ranks by",
          zh="normalised_score 等于 log P / lp，也就是束搜索排序所用的得分")
def _(mod, rng):
    score = need(mod, "normalised_score")
    for L, a in cases(rng):
        log_prob = -float(rng.uniform(0.1, 3.0)) * L  # about 0.1 to 3 nats per token
        want = log_prob / course_penalty(L, a)
        got = as_float(score(log_prob, L, a), "normalised_score")
        found = [(np.array([log_prob * course_penalty(L, a)]), TIMES_LP)]
        found += [(np.array([log_prob / v]), h) for v, h in penalty_mistakes(L, a)]
        expect_close(np.array([got]), np.array([want]),
                     f"normalised_score({log_prob:.4g}, {L}, {a})",
                     "log_prob / length_penalty(length, alpha)", found, atol=1e-12)


ELEMENTWISE_HINT = Text("use only + / ** (or NumPy functions) on length and log_prob: no int(), "
                        "float(), math.pow or Python loops, which take one number, not an array",
                        "对 length 和 log_prob 只用 + / **（或 NumPy 函数）：不要用 int()、"
                        "float()、math.pow 或 Python 循环，它们只接受一个数，不接受数组")


def on_arrays(call, what):
    """``call()`` on arrays; a scalar-only function's error becomes this check's failure."""
    try:
        return np.asarray(call(), dtype=float)
    except (TypeError, ValueError) as error:
        raise CheckFailed(tr(f"{what} for an array", f"{what} 能处理数组"), raised(error),
                          ELEMENTWISE_HINT) from None


def array_case(rng):
    L = rng.integers(1, 61, 6)
    return L, -rng.uniform(0.1, 3.0, 6) * L, np.array([course_penalty(int(n), 0.6) for n in L])


LP_ARRAYS = "length_penalty works element-wise on a NumPy array of lengths"
SCORE_ARRAYS = "normalised_score works element-wise on NumPy arrays"


@ex.check(LP_ARRAYS, zh="length_penalty 对 NumPy 长度数组逐元素计算")
def _(mod, rng):
    L, _, want_lp = array_case(rng)
    expect_close(on_arrays(lambda: need(mod, "length_penalty")(L, 0.6), "length_penalty"),
                 want_lp, "length_penalty(lengths, 0.6)", ELEMENTWISE_HINT,
                 penalty_mistakes(L, 0.6), atol=1e-12)


@ex.check(SCORE_ARRAYS, zh="normalised_score 对 NumPy 数组逐元素计算")
def _(mod, rng):
    L, log_prob, want_lp = array_case(rng)
    expect_close(on_arrays(lambda: need(mod, "normalised_score")(log_prob, L, 0.6),
                           "normalised_score"), log_prob / want_lp,
                 "normalised_score(log_probs, lengths, 0.6)", ELEMENTWISE_HINT, atol=1e-12)


ex.keeps({
    "length_penalty: value": ("length_penalty equals ((5 + |Y|) / 6) ** alpha (values, not only "
                              "the ranking)", "alpha = 0 gives 1 for every length; length 1 "
                              "gives 1 for every alpha"),
    "length_penalty: elementwise": LP_ARRAYS,
    "normalised_score: value": "normalised_score equals log P / lp, the score beam search ranks by",
    "normalised_score: elementwise": SCORE_ARRAYS,
})
