"""Graders of the chapter "Scaled dot-product attention": masked_softmax, and attention itself
in NumPy and in PyTorch. The expected values come from ``aiayn.np`` (and ``aiayn.pt`` for
gradients) on random shapes with T_q != T_k and d_v != d_k, so a transposed axis cannot hide."""

import numpy as np

from ...np import attention as course
from ..compare import as_numpy, expect_close, expect_finite, expect_shape
from ..core import exercise, need
from ._attention import (ALL_MASKED, ALL_MASKED_HINT, AXIS_HINT, GRADIENTS, MASK_HINT, MASKED,
                         OUTPUT, OVERFLOW_HINT, OWN_ATTENTION, SCALED, SHAPES, SUMS,
                         attention_checks, expect_rows_sum_to_one, padding, all_masked_row,
                         random_qkv, softmax)

# masked_softmax (NumPy) ---------------------------------------------------------------------
ms = exercise("scaled_dot_product_attention/masked_softmax",
              "scaled_dot_product_attention/masked_softmax.py",
              "masked_softmax in NumPy: zero weight for masked keys, zero rows, no NaN")


def random_scores(rng, scale=1.0):
    q, k, _ = random_qkv(rng)
    return scale * rng.standard_normal((*q.shape[:3], k.shape[2]))


@ms.check("rows sum to 1 over the last axis (the keys)")
def _(mod, rng):
    scores = random_scores(rng)
    got = as_numpy(need(mod, "masked_softmax")(scores))
    expect_shape(got, scores.shape, "weights", "return one weight per score: the same shape")
    expect_rows_sum_to_one(got)


@ms.check("without a mask it is the softmax over the last axis")
def _(mod, rng):
    scores = random_scores(rng)
    expect_close(mod.masked_softmax(scores), course.masked_softmax(scores), "weights",
                 "compute exp(s - max) / sum(exp(s - max)) along the last axis",
                 [(softmax(scores, -2), AXIS_HINT)])


@ms.check("huge scores do not overflow (subtract the row maximum)")
def _(mod, rng):
    scores = random_scores(rng, scale=1000.0)
    got = mod.masked_softmax(scores)
    expect_finite(got, "weights for scores of size ~1000", OVERFLOW_HINT)
    expect_close(got, course.masked_softmax(scores), "weights", OVERFLOW_HINT)


@ms.check("masked keys get exactly 0, True = may attend")
def _(mod, rng):
    scores = random_scores(rng)
    mask = padding(rng, scores.shape[0], scores.shape[-1])
    expect_close(mod.masked_softmax(scores, mask), course.masked_softmax(scores, mask), "weights",
                 "weights of blocked keys must be exactly 0 and the rest must sum to 1",
                 [(course.masked_softmax(scores, ~mask), MASK_HINT)], atol=1e-12)


@ms.check("a row whose keys are all masked is all zeros, not NaN")
def _(mod, rng):
    scores = random_scores(rng)
    mask = all_masked_row(rng, scores.shape[0], scores.shape[2], scores.shape[3])
    got = mod.masked_softmax(scores, mask)
    expect_finite(got, "weights", ALL_MASKED_HINT)
    expect_close(got, course.masked_softmax(scores, mask), "weights", ALL_MASKED_HINT, atol=1e-12)


@ms.check("broadcasts a causal mask (1, 1, T, T)")
def _(mod, rng):
    T = int(rng.integers(3, 7))
    scores = rng.standard_normal((2, 3, T, T))
    mask = np.tril(np.ones((T, T), dtype=bool))[None, None]
    expect_close(mod.masked_softmax(scores, mask), course.masked_softmax(scores, mask), "weights",
                 "query i may attend to keys 0..i only: mask broadcasts over batch and heads",
                 [(course.masked_softmax(scores, ~mask), MASK_HINT)], atol=1e-12)


@ms.check("leaves its input unchanged")
def _(mod, rng):
    scores = random_scores(rng)
    mask = padding(rng, scores.shape[0], scores.shape[-1])
    before = scores.copy()
    mod.masked_softmax(scores, mask)
    expect_close(scores, before, "scores",
                 "you wrote into the caller's array (e.g. scores[~mask] = -np.inf): use "
                 "np.where(mask, scores, -np.inf), which returns a new array")


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
                      "scaled dot-product attention in NumPy, with masks")
attention_checks(sdpa_numpy, "numpy")
sdpa_numpy.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "softmax": SUMS, "scale": SCALED, "output": OUTPUT, "mask": MASKED,
    "all-masked": ALL_MASKED,
    "no-head-loop": "no loop over heads or sentences: (B, H) = (2, 2) and (3, 5) run as many "
                    "lines",
    "own-softmax": "computes the softmax itself, with no function of the course (aiayn)"}.items()})

sdpa_torch = exercise("scaled_dot_product_attention/sdpa_torch",
                      "scaled_dot_product_attention/sdpa_torch.py",
                      "scaled dot-product attention in PyTorch, with masks and gradients")
attention_checks(sdpa_torch, "torch")
sdpa_torch.keeps({f"scaled_dot_product_attention: {key}": checks for key, checks in {
    "shapes": SHAPES, "dtype": SHAPES, "softmax": SUMS, "scale": SCALED, "output": OUTPUT,
    "mask": MASKED, "all-masked": ALL_MASKED, "gradients": GRADIENTS,
    "own-attention": OWN_ATTENTION}.items()})
