"""Graders of the chapter "Scaled dot-product attention": masked_softmax, and attention itself
in NumPy and in PyTorch. The expected values come from ``aiayn.np`` (and ``aiayn.pt`` for
gradients) on random shapes with T_q != T_k and d_v != d_k, so a transposed axis cannot hide."""

import numpy as np

from ...np import attention as course
from ..compare import as_numpy, expect_close, expect_finite, expect_shape
from ..core import exercise, need
from ..language import tr
from ._attention import (ALL_MASKED, ALL_MASKED_HINT, AXIS_HINT, GRADIENTS, MASK_HINT, MASKED,
                         OUTPUT, OVERFLOW_HINT, OWN_ATTENTION, SCALED, SHAPES, SUMS,
                         attention_checks, expect_rows_sum_to_one, padding, all_masked_row,
                         random_qkv, softmax)

# masked_softmax (NumPy) ---------------------------------------------------------------------
ms = exercise("scaled_dot_product_attention/masked_softmax",
              "scaled_dot_product_attention/masked_softmax.py",
              "masked_softmax in NumPy: zero weight for masked keys, zero rows, no NaN",
              zh="用 NumPy 写 masked_softmax：被屏蔽的键权重为 0，整行被屏蔽时为全 0，没有 NaN")


def random_scores(rng, scale=1.0):
    q, k, _ = random_qkv(rng)
    return scale * rng.standard_normal((*q.shape[:3], k.shape[2]))


@ms.check("rows sum to 1 over the last axis (the keys)", zh="每行沿最后一维（键）加起来等于 1")
def _(mod, rng):
    scores = random_scores(rng)
    got = as_numpy(need(mod, "masked_softmax")(scores))
    expect_shape(got, scores.shape, "weights", tr("return one weight per score: the same shape",
                                                  "每个分数对应一个权重：形状相同"))
    expect_rows_sum_to_one(got)


@ms.check("without a mask it is the softmax over the last axis",
          zh="不带掩码时，就是沿最后一维的 softmax")
def _(mod, rng):
    scores = random_scores(rng)
    expect_close(mod.masked_softmax(scores), course.masked_softmax(scores), "weights", tr(
        "compute exp(s - max) / sum(exp(s - max)) along the last axis",
        "沿最后一维计算 exp(s - max) / sum(exp(s - max))"), [(softmax(scores, -2), AXIS_HINT)])


@ms.check("huge scores do not overflow (subtract the row maximum)",
          zh="分数很大时也不溢出（减去每行的最大值）")
def _(mod, rng):
    scores = random_scores(rng, scale=1000.0)
    got = mod.masked_softmax(scores)
    expect_finite(got, tr("weights for scores of size ~1000", "分数约为 1000 时的 weights"),
                  OVERFLOW_HINT)
    expect_close(got, course.masked_softmax(scores), "weights", OVERFLOW_HINT)


@ms.check("masked keys get exactly 0, True = may attend",
          zh="被屏蔽的键恰好得到 0，True 表示可以关注")
def _(mod, rng):
    scores = random_scores(rng)
    mask = padding(rng, scores.shape[0], scores.shape[-1])
    expect_close(mod.masked_softmax(scores, mask), course.masked_softmax(scores, mask), "weights",
                 tr("weights of blocked keys must be exactly 0 and the rest must sum to 1",
                    "被屏蔽的键权重必须恰好为 0，其余权重之和必须为 1"),
                 [(course.masked_softmax(scores, ~mask), MASK_HINT)], atol=1e-12)


@ms.check("a row whose keys are all masked is all zeros, not NaN",
          zh="所有键都被屏蔽的一行是全 0，而不是 NaN")
def _(mod, rng):
    scores = random_scores(rng)
    mask = all_masked_row(rng, scores.shape[0], scores.shape[2], scores.shape[3])
    got = mod.masked_softmax(scores, mask)
    expect_finite(got, "weights", ALL_MASKED_HINT)
    expect_close(got, course.masked_softmax(scores, mask), "weights", ALL_MASKED_HINT, atol=1e-12)


@ms.check("broadcasts a causal mask (1, 1, T, T)", zh="能广播 (1, 1, T, T) 的因果掩码")
def _(mod, rng):
    T = int(rng.integers(3, 7))
    scores = rng.standard_normal((2, 3, T, T))
    mask = np.tril(np.ones((T, T), dtype=bool))[None, None]
    expect_close(mod.masked_softmax(scores, mask), course.masked_softmax(scores, mask), "weights",
                 tr("query i may attend to keys 0..i only: mask broadcasts over batch and heads",
                    "查询 i 只能关注键 0..i：掩码在批次和头上广播"),
                 [(course.masked_softmax(scores, ~mask), MASK_HINT)], atol=1e-12)


@ms.check("leaves its input unchanged", zh="不修改输入")
def _(mod, rng):
    scores = random_scores(rng)
    mask = padding(rng, scores.shape[0], scores.shape[-1])
    before = scores.copy()
    mod.masked_softmax(scores, mask)
    expect_close(scores, before, "scores", tr(
        "you wrote into the caller's array (e.g. scores[~mask] = -np.inf): use "
        "np.where(mask, scores, -np.inf), which returns a new array",
        "你写入了调用者的数组（例如 scores[~mask] = -np.inf）：改用 "
        "np.where(mask, scores, -np.inf)，它会返回一个新数组"))


ms.keeps({
    "masked_softmax: softmax": ("rows sum to 1 over the last axis (the keys)",
                                "without a mask it is the softmax over the last axis"),
    "masked_softmax: mask": ("masked keys get exactly 0, True = may attend",
                             "broadcasts a causal mask (1, 1, T, T)"),
    "masked_softmax: all-masked": "a row whose keys are all masked is all zeros, not NaN",
    "masked_softmax: no-overflow": "huge scores do not overflow (subtract the row maximum)",
    "masked_softmax: input-unchanged": "leaves its input unchanged",
})

sdpa_numpy = exercise("scaled_dot_product_attention/sdpa_numpy",
                      "scaled_dot_product_attention/sdpa_numpy.py",
                      "scaled dot-product attention in NumPy, with masks",
                      zh="用 NumPy 写缩放点积注意力，带掩码")
attention_checks(sdpa_numpy, "numpy")
sdpa_numpy.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "softmax": SUMS, "scale": SCALED, "output": OUTPUT, "mask": MASKED,
    "all-masked": ALL_MASKED,
    "no-head-loop": "no loop over heads or sentences: (B, H) = (2, 2) and (3, 5) run as many "
                    "lines",
    "own-softmax": "computes the softmax itself, with no function of the course (aiayn)"}.items()})

sdpa_torch = exercise("scaled_dot_product_attention/sdpa_torch",
                      "scaled_dot_product_attention/sdpa_torch.py",
                      "scaled dot-product attention in PyTorch, with masks and gradients",
                      zh="用 PyTorch 写缩放点积注意力，带掩码和梯度")
attention_checks(sdpa_torch, "torch")
sdpa_torch.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "dtype": SHAPES, "softmax": SUMS, "scale": SCALED, "output": OUTPUT,
    "mask": MASKED, "all-masked": ALL_MASKED, "gradients": GRADIENTS,
    "own-attention": OWN_ATTENTION}.items()})
