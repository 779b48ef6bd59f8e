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
from ..language import Text, tr

AXIS_HINT = Text("softmax must normalise over the LAST axis, the keys (axis=-1 / dim=-1): each "
                 "query distributes its attention over the keys. Your rows sum to 1 over the "
                 "queries axis (-2) instead",
                 "softmax 必须在最后一维（键所在的维，axis=-1 / dim=-1）上归一化：每个查询把注意力"
                 "分给各个键。你的结果却是沿查询那一维（-2）加起来等于 1")
MASK_HINT = Text("your mask is inverted: you blocked the keys where the mask is True. In this "
                 "course True means 'this query may attend to this key', so block where the mask "
                 "is False (np.where(mask, scores, -np.inf) / scores.masked_fill(~mask, ...))",
                 "掩码用反了：你屏蔽的是掩码为 True 的键。本课程中 True 表示“这个查询可以关注这个"
                 "键”，所以要屏蔽掩码为 False 的位置（np.where(mask, scores, -np.inf) / "
                 "scores.masked_fill(~mask, ...)）")
ALL_MASKED_HINT = Text("a query whose keys are all masked must get zero weights (and a zero "
                       "output): the softmax of a row of -inf is 0/0 = NaN, and a large negative "
                       "fill such as -1e9 gives a uniform row instead. Shift by a finite row "
                       "maximum and divide by a sum that is never 0, or zero the masked weights "
                       "after the softmax",
                       "所有键都被屏蔽的查询，权重必须全为 0（输出也为 0）：一整行 -inf 的 softmax 是 "
                       "0/0 = NaN，而用 -1e9 这样的大负数填充又会得到一行均匀的权重。减去一个有限的"
                       "行最大值，再除以一个永远不为 0 的和；或者在 softmax 之后把被屏蔽的权重置零")
OVERFLOW_HINT = Text("exp of a large score overflows to inf, and inf/inf is NaN: subtract each "
                     "row's maximum before exp (softmax is unchanged by a shift)",
                     "很大的分数取 exp 会溢出成 inf，而 inf/inf 是 NaN：在 exp 之前先减去每行的最大值"
                     "（整体平移不改变 softmax）")

NO_SCALE_HINT = Text("you did not scale the scores: divide Q K^T by sqrt(d_k) (the √d_k of the "
                     "paper) before the softmax",
                     "你没有缩放分数：在 softmax 之前把 Q K^T 除以 sqrt(d_k)（论文中的 √d_k）")
BY_D_K_HINT = Text("you divided by d_k: the paper scales by sqrt(d_k) (√d_k), which keeps the "
                   "scores' variance near 1",
                   "你除的是 d_k：论文除以的是 sqrt(d_k)（√d_k），这样分数的方差才保持在 1 附近")


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
                tr("normalise over the last axis (axis=-1 / dim=-1): exp(s - max) / sum of it",
                   "在最后一维上归一化（axis=-1 / dim=-1）：exp(s - max) 除以它的和"))
        raise CheckFailed(tr("each query's weights summing to 1 over the keys",
                             "每个查询对各个键的权重之和为 1"),
                          tr(f"row sums {fmt(sums)}", f"各行之和 {fmt(sums)}"), hint)



def attention_checks(ex, kind: str) -> None:
    """Registers the checks of ``ex``; ``kind`` is "numpy" or "torch" (what the reader uses)."""
    to_reader = np.asarray if kind == "numpy" else torch.from_numpy

    def attend(mod, q, k, v, mask=None):
        args = [to_reader(a) for a in (q, k, v)] + [None if mask is None else to_reader(mask)]
        result = need(mod, "scaled_dot_product_attention")(*args)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise CheckFailed(tr("a pair (output, weights)", "一对值 `(output, weights)`"),
                              f"{type(result).__name__}",
                              tr("return weights @ v and the weights: `return out, weights`",
                                 "同时返回 weights @ v 和权重：`return out, weights`"))
        return result

    def mistakes(q, k, v, mask=None):
        """What the classic slips return on these inputs (weights only)."""
        scores = q @ np.swapaxes(k, -1, -2)
        d_k = q.shape[-1]
        found = [(course.masked_softmax(scores, mask), NO_SCALE_HINT),
                 (course.masked_softmax(scores / d_k, mask), BY_D_K_HINT)]
        if mask is None:
            found.append((softmax(scores / math.sqrt(d_k), -2), AXIS_HINT))
        else:
            found.append((course.masked_softmax(scores / math.sqrt(d_k), ~mask), MASK_HINT))
        return found

    @ex.check("returns (output, weights) of shapes (B, H, T_q, d_v), (B, H, T_q, T_k)",
              zh="返回 `(output, weights)`，形状分别为 (B, H, T_q, d_v) 和 (B, H, T_q, T_k)")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        out, weights = attend(mod, q, k, v)
        B, H, T_q, _ = q.shape
        hint = tr("scores are Q K^T over the last two axes: k.swapaxes(-1, -2) in NumPy, "
                  "k.transpose(-2, -1) in PyTorch (.T on a 4-D array reverses every axis)",
                  "分数是在最后两维上算的 Q K^T：NumPy 用 k.swapaxes(-1, -2)，PyTorch 用 "
                  "k.transpose(-2, -1)（对 4 维数组用 .T 会把所有维的顺序都倒过来）")
        for name, got, shape in (("output", out, (B, H, T_q, v.shape[-1])),
                                 ("weights", weights, (B, H, T_q, k.shape[2]))):
            expect_array(got, kind, name)
            expect_shape(got, shape, name, hint)
        if kind == "torch":
            q32, k32, v32 = (a.astype(np.float32) for a in (q, k, v))
            out32 = attend(mod, q32, k32, v32)[0]
            if out32.dtype != torch.float32:
                raise CheckFailed(tr("float32 output for float32 inputs",
                                     "float32 输入得到 float32 输出"), f"{out32.dtype}",
                                  tr("keep the input's dtype: build constants with the input's "
                                     "dtype and device (e.g. torch.finfo(scores.dtype).min)",
                                     "保持输入的数据类型：常量要用输入的 `dtype` 和 `device` 来构造"
                                     "（例如 torch.finfo(scores.dtype).min）"))

    @ex.check("each query's weights sum to 1 over the keys (softmax over the last axis)",
              zh="每个查询对各个键的权重之和为 1（softmax 作用在最后一维）")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        expect_rows_sum_to_one(as_numpy(attend(mod, q, k, v)[1]))

    @ex.check("scores are scaled by 1/√d_k", zh="分数乘以 1/√d_k")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        expect_close(attend(mod, q, k, v)[1], course.scaled_dot_product_attention(q, k, v)[1],
                     "weights", tr("weights = softmax(Q K^T / sqrt(d_k)) over the keys",
                                   "weights = softmax(Q K^T / sqrt(d_k))，在键所在的维上计算"),
                     mistakes(q, k, v))

    @ex.check("output is weights @ V", zh="输出等于 weights @ V")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        out, weights = attend(mod, q, k, v)
        expect_close(out, as_numpy(weights) @ v, "output", tr(
            "multiply the weights by the values: (B, H, T_q, T_k) @ (B, H, T_k, d_v) -> "
            "(B, H, T_q, d_v)", "用权重乘以值：(B, H, T_q, T_k) @ (B, H, T_k, d_v) -> "
            "(B, H, T_q, d_v)"))
        expect_close(out, course.scaled_dot_product_attention(q, k, v)[0], "output",
                     "output = softmax(Q K^T / sqrt(d_k)) V")

    @ex.check("masked keys get exactly zero weight (True = may attend)",
              zh="被屏蔽的键权重恰好为 0（True 表示可以关注）")
    def _(mod, rng):
        q, k, v = random_qkv(rng)
        mask = padding(rng, q.shape[0], k.shape[2])
        expect_close(attend(mod, q, k, v, mask)[1],
                     course.scaled_dot_product_attention(q, k, v, mask)[1], "weights",
                     tr("blocked keys get weight 0; the others share the whole weight",
                        "被屏蔽的键权重为 0；其余的键分掉全部权重"),
                     mistakes(q, k, v, mask), atol=1e-10)

    @ex.check("padding AND causal mask (B, 1, T, T) broadcasts over the heads",
              zh="填充掩码与因果掩码取 AND 得到 (B, 1, T, T)，在各个头上广播")
    def _(mod, rng):
        q, k, v = random_qkv(rng, same_length=True)
        T = q.shape[2]
        mask = padding(rng, q.shape[0], T) & np.tril(np.ones((T, T), dtype=bool))[None, None]
        mask[:, :, :, 0] = True  # every query keeps key 0: no all-masked row in this check
        out, weights = attend(mod, q, k, v, mask)
        want_out, want_weights = course.scaled_dot_product_attention(q, k, v, mask)
        expect_close(weights, want_weights, "weights", tr("mask the scores before the softmax",
                                                          "在 softmax 之前屏蔽分数"),
                     mistakes(q, k, v, mask), atol=1e-10)
        expect_close(out, want_out, "output", "output = weights @ V", atol=1e-10)

    @ex.check("a query with every key masked: zero weights, zero output, no NaN",
              zh="所有键都被屏蔽的查询：权重为 0，输出为 0，没有 NaN")
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
                  "lines", zh="不用循环逐个处理头或句子：(B, H) = (2, 2) 与 (3, 5) 运行的代码行数相同")
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
                       "遍历头（或句子）的 Python 循环，每个头都要把循环体跑一遍：直接对整个 "
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
                                  tr(", ", "、").join(list(dict.fromkeys(course_calls))[:3]),
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
                                  tr(", ", "、").join(
                                      list(dict.fromkeys(library + course_calls))[:3]),
                                  tr("write the computation: q @ k.transpose(-2, -1) / "
                                     "sqrt(d_k), the mask, the softmax, weights @ v. "
                                     "F.scaled_dot_product_attention returns no weights, and "
                                     "the course's implementation is what your code is "
                                     "compared with",
                                     "自己写出计算过程：q @ k.transpose(-2, -1) / sqrt(d_k)，"
                                     "加掩码，softmax，再 weights @ v。"
                                     "F.scaled_dot_product_attention 不返回注意力权重，而课程的"
                                     "实现正是评分时用来对照的答案"))

        @ex.check("gradients equal aiayn.pt's and stay finite with an all-masked row",
                  zh="梯度与 aiayn.pt 的一致，有一整行被屏蔽时仍是有限值")
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
                    raise CheckFailed(tr(f"a gradient for {name}", f"{name} 有梯度"), "None",
                                      tr("keep the computation in PyTorch: no .numpy(), .item() "
                                         "or .detach() inside",
                                         "整个计算都留在 PyTorch 里：中间不要用 .numpy()、.item() "
                                         "或 .detach()"))
                grad = tr(f"gradient of {name}", f"{name} 的梯度")
                expect_finite(got, grad, ALL_MASKED_HINT + Text(
                    ". In the backward pass NaN * 0 is still NaN: keep the fill value finite, "
                    "e.g. torch.finfo(scores.dtype).min, then zero the masked weights",
                    "。反向传播中 NaN * 0 仍是 NaN：填充值要用有限值，例如 "
                    "torch.finfo(scores.dtype).min，再把被屏蔽的权重置零"))
                expect_close(got, want, grad, tr(
                    "the gradients follow from a correct forward pass; look at the forward "
                    "checks first", "前向传播对了，梯度自然就对：先看前向传播的那几项检查"),
                    atol=1e-10)


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
