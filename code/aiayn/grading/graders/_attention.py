"""Scaled dot-product attention's checks, shared by three exercises: the NumPy and the PyTorch
one of the chapter "Scaled dot-product attention" and stage 1 of the from-scratch chapter. The
expected values come from ``aiayn.np`` (and ``aiayn.pt`` for gradients) on random shapes with
T_q != T_k and d_v != d_k, so a transposed axis cannot hide. The constants name the checks for
the exercises' promise tables."""

import math

import numpy as np
import torch

from ...np import attention as course
from ...pt import attention as course_pt
from ..calls import calls_made, lines_run
from ..compare import as_numpy, expect_array, expect_close, expect_finite, expect_shape, fmt
from ..core import CheckFailed, need
from ..language import tr

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


def expect_rows_sum_to_one(weights) -> None:
    sums = weights.sum(-1)
    if not np.allclose(sums, 1.0):
        hint = (AXIS_HINT if np.allclose(weights.sum(-2), 1.0) else
                "normalise over the last axis (axis=-1 / dim=-1): exp(s - max) / sum of it")
        raise CheckFailed("each query's weights summing to 1 over the keys",
                          f"row sums {fmt(sums)}", hint)



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

    if kind == "numpy":
        @ex.check("no loop over heads or sentences: (B, H) = (2, 2) and (3, 5) run as many "
                  "lines", zh="不对头或句子循环：(B, H) = (2, 2) 与 (3, 5) 运行的代码行数相同")
        def _(mod, rng):
            T_q, T_k, d_k, d_v = 4, 5, 6, 7
            lines = {}
            for B, H in ((2, 2), (3, 5)):
                q, k, v = (rng.standard_normal((B, H, T, d)) for T, d in
                           ((T_q, d_k), (T_k, d_k), (T_k, d_v)))
                lines[B, H] = lines_run(attend, mod, q, k, v, padding(rng, B, T_k))
            if lines[2, 2] != lines[3, 5]:
                raise CheckFailed(
                    tr("as many lines of your code for 15 heads as for 4",
                       "15 个头与 4 个头运行的代码行数相同"),
                    tr(f"{lines[2, 2]} lines for (B, H) = (2, 2), {lines[3, 5]} for (3, 5)",
                       f"(B, H) = (2, 2) 运行 {lines[2, 2]} 行，(3, 5) 运行 {lines[3, 5]} 行"),
                    tr("a Python loop over the heads (or the sentences) runs its body once per "
                       "head: multiply the whole (B, H, T, d) arrays instead, q @ "
                       "np.swapaxes(k, -1, -2), which does every head of every sentence at once",
                       "对头（或句子）的 Python 循环每个头都要把循环体跑一遍：直接对整个 "
                       "(B, H, T, d) 数组做矩阵乘法，q @ np.swapaxes(k, -1, -2) 一次算完所有句子"
                       "的所有头"))

        @ex.check("computes the softmax itself, with no function of the course (aiayn)",
                  zh="自己写 softmax，不调用课程（aiayn）的函数")
        def _(mod, rng):
            q, k, v = random_qkv(rng)
            _, course_calls, _ = calls_made(attend, mod, q, k, v, padding(rng, q.shape[0],
                                                                          k.shape[2]))
            if course_calls:
                raise CheckFailed(tr("no call into the course's code (aiayn)",
                                     "不调用课程（aiayn）的代码"),
                                  ", ".join(list(dict.fromkeys(course_calls))[:3]),
                                  tr("write the softmax here, as in the masked_softmax exercise "
                                     "(exp(s - max) / its sum over the keys, the mask applied): "
                                     "the course's implementation is what your code is "
                                     "compared with",
                                     "像 masked_softmax 练习那样在这里自己写 softmax（对键计算 "
                                     "exp(s - max) / 其和，并应用掩码）：课程的实现正是评分时"
                                     "用来对照的答案"))

    if kind == "torch":
        @ex.check("computes the attention itself: no F.scaled_dot_product_attention, nothing "
                  "of the course (aiayn)", zh="自己计算注意力：不调用 "
                  "F.scaled_dot_product_attention，也不调用课程（aiayn）的实现")
        def _(mod, rng):
            q, k, v = random_qkv(rng)
            _, course_calls, builtins = calls_made(attend, mod, q, k, v, padding(
                rng, q.shape[0], k.shape[2]))
            library = ["F.scaled_dot_product_attention" for f in builtins
                       if f is torch.nn.functional.scaled_dot_product_attention]
            if library or course_calls:
                raise CheckFailed(tr("the attention computed by your own code",
                                     "由你自己的代码计算的注意力"),
                                  ", ".join(list(dict.fromkeys(library + course_calls))[:3]),
                                  tr("write the computation: q @ k.transpose(-2, -1) / "
                                     "sqrt(d_k), the mask, the softmax, weights @ v. "
                                     "F.scaled_dot_product_attention returns no weights, and "
                                     "the course's implementation is what your code is "
                                     "compared with",
                                     "自己写出计算过程：q @ k.transpose(-2, -1) / sqrt(d_k)，"
                                     "加掩码，softmax，再 weights @ v。"
                                     "F.scaled_dot_product_attention 不返回注意力权重，而课程的"
                                     "实现正是评分时用来对照的答案"))

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


SHAPES = "returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)"
SUMS = "each query's weights sum to 1 over the keys (softmax over the last axis)"
SCALED = "scores are scaled by 1/√d_k"
OUTPUT = "output is weights @ V"
MASKED = ("masked keys get exactly zero weight (True = may attend)",
          "padding AND causal mask (B, 1, T, T) broadcasts over the heads")
ALL_MASKED = "a query with every key masked: zero weights, zero output, no NaN"
GRADIENTS = "gradients equal aiayn.pt's and stay finite with an all-masked row"
OWN_ATTENTION = ("computes the attention itself: no F.scaled_dot_product_attention, nothing of "
                 "the course (aiayn)")
