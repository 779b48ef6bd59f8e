"""Graders of the chapter "Scaled dot-product attention": masked_softmax, and attention itself
in NumPy and in PyTorch. The expected values come from ``aiayn.np`` (and ``aiayn.pt`` for
gradients) on random shapes with T_q != T_k and d_v != d_k, so a transposed axis cannot hide."""

import math

import numpy as np
import torch

from ...np import attention as course
from ...pt import attention as course_pt
from ..compare import as_numpy, expect_array, expect_close, expect_finite, expect_shape, fmt
from ..core import CheckFailed, exercise, need

AXIS_HINT = ("softmax must normalise over the LAST axis, the keys (axis=-1 / dim=-1): each "
             "query distributes its attention over the keys. Your rows sum to 1 over the "
             "queries axis (-2) instead")
MASK_HINT = ("your mask is inverted: you blocked the keys where the mask is True. In this course "
             "True means 'this query may attend to this key', so block where the mask is False "
             "(np.where(mask, scores, -np.inf) / scores.masked_fill(~mask, ...))")
ALL_MASKED_HINT = ("a query whose keys are all masked must get zero weights (and a zero "
                   "output): the softmax of a row of -inf is 0/0 = NaN, and a large negative fill "
                   "such as -1e9 gives a uniform row instead. Shift by a finite row maximum and "
                   "divide by a sum that is never 0, or zero the masked weights after the softmax")
OVERFLOW_HINT = ("exp of a large score overflows to inf, and inf/inf is NaN: subtract each row's "
                 "maximum before exp (softmax is unchanged by a shift)")


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def random_qkv(rng, same_length=False):
    """float64 q, k, v with small random shapes: B, H in 2..3, T_q != T_k, d_v != d_k."""
    B, H = rng.integers(2, 4, size=2)
    T_q = int(rng.integers(3, 7))
    T_k = T_q if same_length else T_q + int(rng.integers(1, 4))
    d_k = int(rng.integers(6, 10))
    d_v = d_k + int(rng.integers(1, 4))
    return (rng.standard_normal((B, H, T_q, d_k)), rng.standard_normal((B, H, T_k, d_k)),
            rng.standard_normal((B, H, T_k, d_v)))


def padding(rng, B, T_k):
    """(B, 1, 1, T_k): row b keeps its first n_b keys, 1 <= n_b < T_k, so every row blocks some."""
    keep = rng.integers(1, T_k, size=B)
    return (np.arange(T_k)[None, :] < keep[:, None])[:, None, None, :]


def all_masked_row(rng, B, T_q, T_k):
    """(B, 1, T_q, T_k) padding plus one query row, in batch 0, with every key blocked."""
    mask = np.broadcast_to(padding(rng, B, T_k), (B, 1, T_q, T_k)).copy()
    mask[0, 0, int(rng.integers(T_q))] = False
    return mask


# masked_softmax (NumPy) ---------------------------------------------------------------------
ms = exercise("scaled_dot_product_attention/masked_softmax",
              "scaled_dot_product_attention/masked_softmax.py",
              "masked_softmax in NumPy: zero weight for masked keys, zero rows, no NaN")


def expect_rows_sum_to_one(weights) -> None:
    sums = weights.sum(-1)
    if not np.allclose(sums, 1.0):
        hint = (AXIS_HINT if np.allclose(weights.sum(-2), 1.0) else
                "normalise over the last axis (axis=-1 / dim=-1): exp(s - max) / sum of it")
        raise CheckFailed("each query's weights summing to 1 over the keys",
                          f"row sums {fmt(sums)}", hint)


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


# scaled_dot_product_attention, NumPy and PyTorch: one set of checks, two exercises ----------
def attention_checks(ex, kind: str) -> None:
    """Registers the checks of ``ex``; ``kind`` is "numpy" or "torch" (what the reader uses)."""
    to_reader = np.asarray if kind == "numpy" else torch.from_numpy

    def attend(mod, q, k, v, mask=None):
        args = [to_reader(a) for a in (q, k, v)] + [None if mask is None else to_reader(mask)]
        result = need(mod, "scaled_dot_product_attention")(*args)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise CheckFailed("a pair (output, weights)", f"{type(result).__name__}",
                              "return weights @ v and the weights: `return out, weights`")
        return result

    def mistakes(q, k, v, mask=None):
        """What the classic slips return on these inputs (weights only)."""
        scores = q @ np.swapaxes(k, -1, -2)
        d_k = q.shape[-1]
        found = [(course.masked_softmax(scores, mask), "you did not scale the scores: divide "
                  "Q K^T by sqrt(d_k) (the √d_k of the paper) before the softmax"),
                 (course.masked_softmax(scores / d_k, mask), "you divided by d_k: the paper "
                  "scales by sqrt(d_k) (√d_k), which keeps the scores' variance near 1")]
        if mask is None:
            found.append((softmax(scores / math.sqrt(d_k), -2), AXIS_HINT))
        else:
            found.append((course.masked_softmax(scores / math.sqrt(d_k), ~mask), MASK_HINT))
        return found

    @ex.check("returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        out, weights = attend(mod, q, k, v)
        B, H, T_q, _ = q.shape
        hint = ("scores are Q K^T over the last two axes: k.swapaxes(-1, -2) in NumPy, "
                "k.transpose(-2, -1) in PyTorch (.T on a 4-D array reverses every axis)")
        for name, got, shape in (("output", out, (B, H, T_q, v.shape[-1])),
                                 ("weights", weights, (B, H, T_q, k.shape[2]))):
            expect_array(got, kind, name)
            expect_shape(got, shape, name, hint)
        if kind == "torch":
            q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
            out32 = attend(mod, q32, k32, v32)[0]
            if out32.dtype != torch.float32:
                raise CheckFailed("float32 output for float32 inputs", f"{out32.dtype}",
                                  "keep the input's dtype: build constants with the input's "
                                  "dtype and device (e.g. torch.finfo(scores.dtype).min)")

    @ex.check("each query's weights sum to 1 over the keys (softmax over the last axis)")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        expect_rows_sum_to_one(as_numpy(attend(mod, q, k, v)[1]))

    @ex.check("scores are scaled by 1/√d_k")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        expect_close(attend(mod, q, k, v)[1], course.scaled_dot_product_attention(q, k, v)[1],
                     "weights", "weights = softmax(Q K^T / sqrt(d_k)) over the keys",
                     mistakes(q, k, v))

    @ex.check("output is weights @ V")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        out, weights = attend(mod, q, k, v)
        expect_close(out, as_numpy(weights) @ v, "output", "multiply the weights by the "
                     "values: (B, H, T_q, T_k) @ (B, H, T_k, d_v) -> (B, H, T_q, d_v)")
        expect_close(out, course.scaled_dot_product_attention(q, k, v)[0], "output",
                     "output = softmax(Q K^T / sqrt(d_k)) V")

    @ex.check("masked keys get exactly zero weight (True = may attend)")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        mask = padding(rng, q.shape[0], k.shape[2])
        expect_close(attend(mod, q, k, v, mask)[1],
                     course.scaled_dot_product_attention(q, k, v, mask)[1], "weights",
                     "blocked keys get weight 0; the others share the whole weight",
                     mistakes(q, k, v, mask), atol=1e-10)

    @ex.check("padding AND causal mask (B, 1, T, T) broadcasts over the heads")
    def _(mod, rng):
        q, k, v = random_qkv(rng, same_length=True)
        T = q.shape[2]
        mask = padding(rng, q.shape[0], T) & np.tril(np.ones((T, T), dtype=bool))[None, None]
        mask[:, :, :, 0] = True  # every query keeps key 0: no all-masked row in this check
        out, weights = attend(mod, q, k, v, mask)
        want_out, want_weights = course.scaled_dot_product_attention(q, k, v, mask)
        expect_close(weights, want_weights, "weights", "mask the scores before the softmax",
                     mistakes(q, k, v, mask), atol=1e-10)
        expect_close(out, want_out, "output", "output = weights @ V", atol=1e-10)

    @ex.check("a query with every key masked: zero weights, zero output, no NaN")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        mask = all_masked_row(rng, q.shape[0], q.shape[2], k.shape[2])
        out, weights = attend(mod, q, k, v, mask)
        want_out, want_weights = course.scaled_dot_product_attention(q, k, v, mask)
        for name, got, want in (("weights", weights, want_weights), ("output", out, want_out)):
            expect_finite(got, name, ALL_MASKED_HINT)
            expect_close(got, want, name, ALL_MASKED_HINT, atol=1e-10)

    if kind == "torch":
        @ex.check("gradients equal aiayn.pt's and stay finite with an all-masked row")
        def _(mod, rng):
            q, k, v = random_qkv(rng)
            mask = torch.from_numpy(all_masked_row(rng, q.shape[0], q.shape[2], k.shape[2]))
            g_out, g_w = (torch.from_numpy(rng.standard_normal(s)) for s in
                          ((*q.shape[:3], v.shape[-1]), (*q.shape[:3], k.shape[2])))
            grads = []
            for fn in (need(mod, "scaled_dot_product_attention"),
                       course_pt.scaled_dot_product_attention):
                inputs = [torch.tensor(a, requires_grad=True) for a in (q, k, v)]
                out, weights = fn(*inputs, mask)
                ((out * g_out).sum() + (weights * g_w).sum()).backward()
                grads.append([a.grad for a in inputs])
            for name, got, want in zip("qkv", *grads):
                if got is None:
                    raise CheckFailed(f"a gradient for {name}", "None", "keep the computation "
                                      "in PyTorch: no .numpy(), .item() or .detach() inside")
                expect_finite(got, f"gradient of {name}", ALL_MASKED_HINT + ". In the backward "
                              "pass NaN * 0 is still NaN: keep the fill value finite, e.g. "
                              "torch.finfo(scores.dtype).min, then zero the masked weights")
                expect_close(got, want, f"gradient of {name}", "the gradients follow from a "
                             "correct forward pass; look at the forward checks first", atol=1e-10)


attention_checks(exercise("scaled_dot_product_attention/sdpa_numpy",
                          "scaled_dot_product_attention/sdpa_numpy.py",
                          "scaled dot-product attention in NumPy, with masks"), "numpy")
attention_checks(exercise("scaled_dot_product_attention/sdpa_torch",
                          "scaled_dot_product_attention/sdpa_torch.py",
                          "scaled dot-product attention in PyTorch, with masks and gradients"),
                 "torch")
