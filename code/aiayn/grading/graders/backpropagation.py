"""Graders of the chapter "Backpropagation by hand": the backward passes of the softmax, of
LayerNorm and of scaled dot-product attention, in NumPy. Expected values come from PyTorch's
autograd through the course's forward functions (float64) and from ``aiayn.np.backprop``, on
random shapes with T_q != T_k and d_k != d_v; each classic slip is recognised by name."""

import math

import numpy as np
import torch

from ...np import attention as course
from ...np import backprop
from ...np.normalization import LayerNorm
from ...pt import attention as course_pt
from ..compare import (as_numpy, expect_array, expect_close, expect_equal, expect_finite,
                       expect_shape, fmt, raised)
from ..core import CheckFailed, exercise, need
from ..language import Text, tr
from ._attention import all_masked_row, padding, random_qkv


def autograd(forward, inputs, grad_out):
    """The gradients of sum(forward(*inputs) * grad_out) with respect to every input."""
    leaves = [torch.tensor(x, requires_grad=True) for x in inputs]
    (forward(*leaves) * torch.from_numpy(grad_out)).sum().backward()
    return [leaf.grad.numpy() for leaf in leaves]


def row_sum(g, p, axis=-1):
    return (g * p).sum(axis=axis, keepdims=True)


# The softmax's backward -------------------------------------------------------------------
sm = exercise("backpropagation/softmax_backward", "backpropagation/softmax_backward.py",
              "the softmax's backward: dL/ds_j = p_j (g_j - sum_i g_i p_i), over the keys",
              zh="softmax 的反向传播：dL/ds_j = p_j (g_j - sum_i g_i p_i)，在键所在的维上计算")

DIAGONAL = Text("you kept only the diagonal of the softmax's Jacobian, p_j (1 - p_j): every "
                "score of a row moves every weight of that row (the off-diagonal entries "
                "-p_i p_j), so dL/ds_j = p_j (g_j - sum_i g_i p_i)",
                "你只保留了 softmax 雅可比矩阵的对角线 p_j (1 - p_j)：一行中的每个分数都会牵动"
                "这一行的每个权重（非对角元素 -p_i p_j），所以 dL/ds_j = p_j (g_j - sum_i g_i p_i)")
NO_ROW_SUM = Text("you returned p * g: that forgets that the weights of a row sum to 1, the "
                  "off-diagonal entries -p_i p_j of the Jacobian. Subtract the row sum: "
                  "p * (g - sum_i g_i p_i)",
                  "你返回的是 p * g：这忘了一行权重之和为 1，也就是雅可比矩阵的非对角元素 "
                  "-p_i p_j。要减去行和：p * (g - sum_i g_i p_i)")
SUM_AXIS = Text("your row sum runs over the queries (axis -2): the softmax normalises each "
                "query's weights over the keys, so sum g * p over the LAST axis (axis=-1, "
                "keepdims=True)",
                "你的行和是沿查询那一维（axis -2）求的：softmax 是在键上归一化每个查询的权重，"
                "所以 g * p 要沿最后一维求和（axis=-1, keepdims=True）")
SIGN = Text("check the sign of the row sum: dL/ds_j = p_j (g_j - sum_i g_i p_i), a minus",
            "检查行和前面的符号：dL/ds_j = p_j (g_j - sum_i g_i p_i)，是减号")
NO_P = Text("you forgot the factor p_j in front: dL/ds_j = p_j (g_j - sum_i g_i p_i); without "
            "it, blocked keys (p = 0) receive a gradient they cannot have",
            "你漏了前面的因子 p_j：dL/ds_j = p_j (g_j - sum_i g_i p_i)；少了它，被屏蔽的键"
            "（p = 0）会得到本不该有的梯度")
SCORES = "dL/d(scores)"


def softmax_mistakes(g, p):
    found = [(p * (1 - p) * g, DIAGONAL), (p * g, NO_ROW_SUM), (p * (g + row_sum(g, p)), SIGN),
             (g - row_sum(g, p), NO_P)]
    if p.ndim > 1:  # a single row has no query axis to sum over by mistake
        found.append((p * (g - row_sum(g, p, -2)), SUM_AXIS))
    return found


def random_scores(rng):
    q, k, _ = random_qkv(rng)
    return rng.standard_normal((*q.shape[:3], k.shape[2]))


def call_softmax_backward(mod, g, p):
    return need(mod, "softmax_backward")(g.copy(), p.copy())


@sm.check("shape of the weights; equals autograd through the softmax over the keys",
          zh="形状与权重相同；与经过 softmax（在键上）的自动求导结果一致")
def _(mod, rng):
    scores = random_scores(rng)
    g, p = rng.standard_normal(scores.shape), course.masked_softmax(scores)
    got = call_softmax_backward(mod, g, p)
    expect_array(got, "numpy", SCORES)
    expect_shape(got, scores.shape, SCORES, tr("one gradient per score: the weights' shape",
                                               "每个分数一个梯度：形状与权重相同"))
    want = autograd(lambda s: torch.softmax(s, dim=-1), [scores], g)[0]
    expect_close(got, want, SCORES, "p * (g - (g * p).sum(axis=-1, keepdims=True))",
                 softmax_mistakes(g, p))


@sm.check("blocked keys get exactly 0; an all-masked row gets zeros, not NaN",
          zh="被屏蔽的键恰好得到 0；整行被屏蔽时得到全 0，而不是 NaN")
def _(mod, rng):
    scores = random_scores(rng)
    mask = all_masked_row(rng, scores.shape[0], scores.shape[2], scores.shape[3])
    g, p = rng.standard_normal(scores.shape), course.masked_softmax(scores, mask)
    got = call_softmax_backward(mod, g, p)
    expect_finite(got, SCORES, tr("use only the weights: a blocked key has p = 0, and p * (...) "
                                  "is then exactly 0; no division, no log, no -inf is needed",
                                  "只用权重来算：被屏蔽的键 p = 0，p * (...) 就恰好是 0；"
                                  "不需要除法、log 或 -inf"))
    expect_close(got, backprop.masked_softmax_backward(g, p), SCORES,
                 tr("a blocked key's weight is 0 whatever its score: its gradient is 0",
                    "被屏蔽的键不论分数多少，权重都是 0：它的梯度也是 0"),
                 softmax_mistakes(g, p), atol=1e-12)


@sm.check("agrees with central finite differences of the masked softmax",
          zh="与带掩码 softmax 的中心差分结果一致")
def _(mod, rng):
    scores = random_scores(rng)
    mask = padding(rng, scores.shape[0], scores.shape[-1])
    g = rng.standard_normal(scores.shape)
    got = call_softmax_backward(mod, g, course.masked_softmax(scores, mask))
    h, numeric = 1e-6, np.zeros(scores.shape)
    for flat in rng.choice(scores.size, size=8, replace=False):
        i = np.unravel_index(flat, scores.shape)
        up, down = scores.copy(), scores.copy()
        up[i] += h
        down[i] -= h
        numeric[i] = ((course.masked_softmax(up, mask) - course.masked_softmax(down, mask)) * g).sum() / (2 * h)
        if abs(got[i] - numeric[i]) > 1e-6:
            at = f"dL/ds{list(map(int, i))} = {numeric[i]:.6f}"
            raise CheckFailed(tr(f"{at} (finite differences)", f"{at}（有限差分）"),
                              f"{got[i]:.6f}", tr(
                                  "change one score by ±1e-6 and watch the loss: its slope is "
                                  "the gradient your formula must give",
                                  "把一个分数改动 ±1e-6，看损失怎么变：这个斜率就是你的公式应该"
                                  "给出的梯度"))


def on_other_ranks(call, hint):
    """``call()``; an error from a fixed axis number (NumPy's AxisError is a ValueError and an
    IndexError, a broadcast or unpacking error a ValueError) becomes this check's failure."""
    try:
        return call()
    except (ValueError, IndexError) as error:
        raise CheckFailed(tr("a result for this number of axes", "对这个维数也能给出结果"),
                          raised(error), hint) from None


@sm.check("works for any number of leading axes, e.g. one row (T_k,)",
          zh="前面有几维都能算，例如只有一行 (T_k,)")
def _(mod, rng):
    scores = rng.standard_normal(int(rng.integers(3, 8)))
    g, p = rng.standard_normal(scores.shape), course.masked_softmax(scores)
    hint = tr("use axis=-1 with keepdims=True, not a fixed axis number",
              "用 axis=-1 加 keepdims=True，不要写死某一维的编号")
    expect_close(on_other_ranks(lambda: call_softmax_backward(mod, g, p), hint),
                 backprop.masked_softmax_backward(g, p),
                 tr("dL/d(scores) of a single row", "单独一行的 dL/d(scores)"), hint,
                 softmax_mistakes(g, p))


# LayerNorm's backward ---------------------------------------------------------------------
ln = exercise("backpropagation/layer_norm_backward", "backpropagation/layer_norm_backward.py",
              "LayerNorm's backward: the direct path, the mean's path and the variance's path",
              zh="LayerNorm 的反向传播：直接路径、均值的路径和方差的路径")

NO_STATS = Text("you treated the mean and the variance as constants (grad_x = g * weight / "
                "sigma): both depend on every x of the row, so subtract the mean's path, "
                "mean(g), and the variance's path, x_hat * mean(g * x_hat), before dividing by "
                "sigma",
                "你把均值和方差当成了常数（grad_x = g * weight / sigma）：两者都依赖这一行的每个 x，"
                "所以在除以 sigma 之前，要减去均值的路径 mean(g) 和方差的路径 "
                "x_hat * mean(g * x_hat)")
NO_VARIANCE = Text("you forgot the variance's path: the variance also depends on x; subtract "
                   "x_hat * mean(g * x_hat) too",
                   "你漏了方差的路径：方差也依赖 x；还要减去 x_hat * mean(g * x_hat)")
NO_MEAN = Text("you forgot the mean's path: the mean also depends on x; subtract mean(g) too",
               "你漏了均值的路径：均值也依赖 x；还要减去 mean(g)")
NO_WEIGHT = Text("the gradient reaching x_hat is dL/dy * weight (y = x_hat * weight + bias): "
                 "you left out the weight",
                 "传到 x_hat 的梯度是 dL/dy * weight（y = x_hat * weight + bias）：你漏了 weight")
WEIGHT_NO_X_HAT = Text("grad_weight is the sum of dL/dy * x_hat (the weight multiplies x_hat), "
                       "not of dL/dy alone: that is grad_bias",
                       "grad_weight 是 dL/dy * x_hat 的和（weight 乘的是 x_hat），不是 dL/dy "
                       "本身的和：那是 grad_bias")
WEIGHT_X = Text("grad_weight is the sum of dL/dy * x_hat, the NORMALISED input: the weight "
                "multiplies x_hat, not x",
                "grad_weight 是 dL/dy * x_hat 的和，x_hat 是归一化之后的输入：weight 乘的是 "
                "x_hat，不是 x")
STD_EPS = Text("you divided by (std + eps): the forward pass divides by sigma = sqrt(var + eps), "
               "eps inside the root, and its backward by the same sigma",
               "你除的是 (std + eps)：前向传播除以 sigma = sqrt(var + eps)，`eps` 在根号里面，"
               "反向传播也要除以同一个 `sigma`")


def layer_norm_setup(rng, scale=1.0, ndim=3):
    B, T = int(rng.integers(2, 5)), int(rng.integers(5, 9))
    d = T + int(rng.integers(2, 6))  # B != T != d
    shape = (B, T, d) if ndim == 3 else (T, d)
    x = (rng.standard_normal(shape) + rng.standard_normal((*shape[:-1], 1))) * scale
    norm = LayerNorm(d)
    norm.weight, norm.bias = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
    return x, norm, rng.standard_normal(shape)


def layer_norm_reference(x, norm, grad_y):
    """The course's LayerNorm, forward then backward: (grad_x, grad_weight, grad_bias)."""
    norm.train()
    norm.zero_grad()
    norm(x)
    grad_x = norm.backward(grad_y)
    grads = norm.gradients()
    norm.eval()
    return grad_x, grads["weight"], grads["bias"]


def layer_norm_mistakes(x, norm, grad_y):
    sigma = np.sqrt(x.var(axis=-1, keepdims=True) + norm.eps)
    x_hat = (x - x.mean(axis=-1, keepdims=True)) / sigma
    g = grad_y * norm.weight

    def paths(g, mean=True, variance=True, sigma=sigma, x_hat=x_hat):
        return (g - (g.mean(-1, keepdims=True) if mean else 0)
                - (x_hat * (g * x_hat).mean(-1, keepdims=True) if variance else 0)) / sigma
    std_eps = x.std(axis=-1, keepdims=True) + norm.eps
    return [(paths(g, False, False), NO_STATS), (paths(g, mean=False), NO_MEAN),
            (paths(g, variance=False), NO_VARIANCE), (paths(grad_y), NO_WEIGHT),
            (paths(g, sigma=std_eps, x_hat=(x - x.mean(-1, keepdims=True)) / std_eps),
             STD_EPS)]


def call_layer_norm_backward(mod, x, norm, grad_y):
    result = need(mod, "layer_norm_backward")(grad_y.copy(), x.copy(), norm.weight.copy(), norm.eps)
    if not (isinstance(result, tuple) and len(result) == 3):
        raise CheckFailed(tr("a triple (grad_x, grad_weight, grad_bias)",
                             "三个值 (grad_x, grad_weight, grad_bias)"),
                          f"{type(result).__name__}", tr("return grad_x, grad_weight, grad_bias",
                                                         "返回 grad_x, grad_weight, grad_bias"))
    return result


@ln.check("grad_x equals autograd through LayerNorm (random weight and bias)",
          zh="grad_x 与经过 LayerNorm（随机的 `weight` 和 `bias`）的自动求导结果一致")
def _(mod, rng):
    x, norm, grad_y = layer_norm_setup(rng)
    grad_x = call_layer_norm_backward(mod, x, norm, grad_y)[0]
    expect_array(grad_x, "numpy", "grad_x")
    expect_shape(grad_x, x.shape, "grad_x", tr("one gradient per input value: the shape of x",
                                               "每个输入值一个梯度：形状与 x 相同"))
    want = autograd(lambda t: torch.nn.functional.layer_norm(
        t, (x.shape[-1],), torch.from_numpy(norm.weight), torch.from_numpy(norm.bias), norm.eps),
        [x], grad_y)[0]
    expect_close(grad_x, want, "grad_x", tr(
        "(g - mean(g) - x_hat * mean(g * x_hat)) / sigma with g = grad_y * weight, "
        "sigma = sqrt(var + eps), means over the last axis",
        "(g - mean(g) - x_hat * mean(g * x_hat)) / sigma，其中 g = grad_y * weight，"
        "sigma = sqrt(var + eps)，均值都沿最后一维求"), layer_norm_mistakes(x, norm, grad_y))


@ln.check("grad_weight = sum of dL/dy * x_hat, grad_bias = sum of dL/dy, over every position",
          zh="grad_weight 是 dL/dy * x_hat 在所有位置上的和，grad_bias 是 dL/dy 在所有位置上的和")
def _(mod, rng):
    x, norm, grad_y = layer_norm_setup(rng)
    _, grad_weight, grad_bias = call_layer_norm_backward(mod, x, norm, grad_y)
    _, want_weight, want_bias = layer_norm_reference(x, norm, grad_y)
    hint = tr("the same weight and bias serve every position: sum over all leading axes, "
              "axis=tuple(range(x.ndim - 1)), leaving (d_model,)",
              "所有位置共用同一组 `weight` 和 `bias`：对前面所有的维求和，"
              "axis=tuple(range(x.ndim - 1))，剩下 (d_model,)")
    for name, got in (("grad_weight", grad_weight), ("grad_bias", grad_bias)):
        expect_array(got, "numpy", name)
        expect_shape(got, want_weight.shape, name, hint)
    expect_close(grad_bias, want_bias, "grad_bias", tr(
        "the bias is added to every position: grad_bias = grad_y summed over all positions",
        "每个位置都加上了 bias：grad_bias = grad_y 在所有位置上的和"))
    expect_close(grad_weight, want_weight, "grad_weight", tr(
        "grad_weight = (grad_y * x_hat) summed over all positions",
        "grad_weight = (grad_y * x_hat) 在所有位置上的和"),
        [(want_bias, WEIGHT_NO_X_HAT), ((grad_y * x).sum(axis=(0, 1)), WEIGHT_X)])


@ln.check("small activations (std ~ 1e-3): sigma = sqrt(var + eps), eps inside the root",
          zh="很小的激活值（标准差约 1e-3）：sigma = sqrt(var + eps)，`eps` 在根号里面")
def _(mod, rng):
    x, norm, grad_y = layer_norm_setup(rng, scale=1e-3)
    want = layer_norm_reference(x, norm, grad_y)[0]
    expect_close(call_layer_norm_backward(mod, x, norm, grad_y)[0], want, "grad_x", tr(
        "divide by the forward pass's sqrt(var + eps), not by (std + eps) nor by std alone: for "
        "tiny activations eps is not negligible",
        "除以前向传播里的 sqrt(var + eps)，不是 (std + eps)，也不是单独的标准差：激活值很小时，"
        "`eps` 不能忽略"), layer_norm_mistakes(x, norm, grad_y), atol=1e-6, rtol=1e-6)


@ln.check("works for a 2-D input (T, d_model)", zh="二维输入 (T, d_model) 也能算")
def _(mod, rng):
    x, norm, grad_y = layer_norm_setup(rng, ndim=2)
    hint = tr("use axis=-1 for the statistics and sum the parameter gradients over "
              "tuple(range(x.ndim - 1)), not over fixed axes",
              "统计量用 axis=-1 计算，参数的梯度对 tuple(range(x.ndim - 1)) 求和，不要写死维的编号")
    got = on_other_ranks(lambda: call_layer_norm_backward(mod, x, norm, grad_y), hint)
    want = layer_norm_reference(x, norm, grad_y)
    for name, g, w in zip(("grad_x", "grad_weight", "grad_bias"), got, want):
        expect_close(g, w, name, hint)


# Attention's backward ---------------------------------------------------------------------
at = exercise("backpropagation/attention_backward", "backpropagation/attention_backward.py",
              "attention's backward: dV, dP, dS (the softmax), then dQ and dK with 1/√d_k",
              zh="注意力的反向传播：先求 dV、dP、dS（softmax 那一步），再求带 1/√d_k 的 dQ 和 dK")

NO_SCALE = Text("you left out the 1/sqrt(d_k): the scores are Q K^T / sqrt(d_k), so dQ = dS K / "
                "sqrt(d_k) and dK = dS^T Q / sqrt(d_k) (√d_k); yours are sqrt(d_k) times too "
                "large",
                "你漏了 1/sqrt(d_k)：分数是 Q K^T / sqrt(d_k)，所以 dQ = dS K / sqrt(d_k)，"
                "dK = dS^T Q / sqrt(d_k)（√d_k）；你的结果大了 sqrt(d_k) 倍")
BY_D_K = Text("you divided by d_k: the forward pass scales by 1/sqrt(d_k) (√d_k), and so does "
              "its backward",
              "你除的是 d_k：前向传播乘的是 1/sqrt(d_k)（√d_k），反向传播也一样")
SKIPS_SOFTMAX = Text("you used dP as if it were dS: between the scores and the weights stands "
                     "the softmax, whose backward is dS = P * (dP - (dP * P).sum(-1, "
                     "keepdims=True))",
                     "你把 dP 当成了 dS：分数和权重之间还隔着 softmax，它的反向传播是 "
                     "dS = P * (dP - (dP * P).sum(-1, keepdims=True))")
ATT_DIAGONAL = Text("your softmax backward keeps only the Jacobian's diagonal, P (1 - P) dP: "
                    "every score of a row moves every weight of the row; subtract the row sum, "
                    "dS = P * (dP - (dP * P).sum(-1, keepdims=True))",
                    "你的 softmax 反向传播只保留了雅可比矩阵的对角线 P (1 - P) dP：一行中的每个"
                    "分数都会牵动这一行的每个权重；要减去行和，"
                    "dS = P * (dP - (dP * P).sum(-1, keepdims=True))")
MASKED_HINT = Text("work from the weights alone: a blocked key has weight 0, so P^T dO and "
                   "P * (dP - ...) give it exactly 0, and an all-masked row stays 0",
                   "只用权重来算：被屏蔽的键权重为 0，P^T dO 和 P * (dP - ...) 给它的就恰好是 0，"
                   "整行被屏蔽的查询也保持为 0")


def attention_mistakes(grad_out, q, k, v, weights, which):
    """What the classic slips give for grad_q (which=0) or grad_k (which=1)."""
    grad_weights = grad_out @ np.swapaxes(v, -1, -2)
    exact = backprop.masked_softmax_backward(grad_weights, weights)
    d_k = q.shape[-1]

    def q_and_k(grad_scores, scale):
        return (grad_scores @ k * scale, np.swapaxes(grad_scores, -1, -2) @ q * scale)[which]
    return [(q_and_k(exact, 1.0), NO_SCALE), (q_and_k(exact, 1.0 / d_k), BY_D_K),
            (q_and_k(grad_weights, 1.0 / math.sqrt(d_k)), SKIPS_SOFTMAX),
            (q_and_k(weights * (1 - weights) * grad_weights, 1.0 / math.sqrt(d_k)), ATT_DIAGONAL)]


def attention_inputs(rng, masked=False):
    """(grad_out, q, k, v, weights), and the mask (one query of batch 0 blocked entirely)."""
    q, k, v = random_qkv(rng)
    mask = all_masked_row(rng, q.shape[0], q.shape[2], k.shape[2]) if masked else None
    _, weights = course.scaled_dot_product_attention(q, k, v, mask)
    return (rng.standard_normal((*q.shape[:3], v.shape[-1])), q, k, v, weights), mask


def call_attention_backward(mod, grad_out, q, k, v, weights):
    result = need(mod, "attention_backward")(grad_out.copy(), q.copy(), k.copy(), v.copy(),
                                             weights.copy())
    if not (isinstance(result, tuple) and len(result) == 3):
        raise CheckFailed(tr("a triple (grad_q, grad_k, grad_v)", "三个值 (grad_q, grad_k, grad_v)"),
                          f"{type(result).__name__}", tr("return grad_q, grad_k, grad_v",
                                                         "返回 grad_q, grad_k, grad_v"))
    return result


SHAPE_HINTS = {"grad_q": Text("dQ = dS K / sqrt(d_k): (T_q, T_k) @ (T_k, d_k)",
                              "dQ = dS K / sqrt(d_k)：(T_q, T_k) @ (T_k, d_k)"),
               "grad_k": Text("dK = dS^T Q / sqrt(d_k): transpose dS, (T_k, T_q) @ (T_q, d_k)",
                              "dK = dS^T Q / sqrt(d_k)：先转置 dS，(T_k, T_q) @ (T_q, d_k)"),
               "grad_v": Text("dV = P^T dO: transpose the weights, (T_k, T_q) @ (T_q, d_v)",
                              "dV = P^T dO：先转置权重，(T_k, T_q) @ (T_q, d_v)")}


def expect_gradient_shapes(got, inputs) -> None:
    for (name, hint), g, x in zip(SHAPE_HINTS.items(), got, inputs[1:4]):
        expect_array(g, "numpy", name)
        expect_shape(g, x.shape, name, hint)


def attention_autograd(grad_out, q, k, v, mask=None):
    mask = None if mask is None else torch.from_numpy(mask)
    return autograd(lambda q, k, v: course_pt.scaled_dot_product_attention(q, k, v, mask)[0],
                    [q, k, v], grad_out)


@at.check("returns (grad_q, grad_k, grad_v) shaped like q, k, v (T_q != T_k, d_k != d_v)",
          zh="返回 (grad_q, grad_k, grad_v)，形状分别与 q、k、v 相同（T_q != T_k，d_k != d_v）")
def _(mod, rng):
    inputs, _ = attention_inputs(rng)
    expect_gradient_shapes(call_attention_backward(mod, *inputs), inputs)


@at.check("grad_v = P^T dL/d(out)", zh="grad_v 等于 P^T dL/d(out)")
def _(mod, rng):
    inputs, _ = attention_inputs(rng)
    want = attention_autograd(*inputs[:4])[2]
    expect_close(call_attention_backward(mod, *inputs)[2], want, "grad_v", tr(
        "out = P V, so dV = P^T dO: np.swapaxes(weights, -1, -2) @ grad_out",
        "out = P V，所以 dV = P^T dO：np.swapaxes(weights, -1, -2) @ grad_out"),
        [(want / math.sqrt(inputs[1].shape[-1]), tr(
            "grad_v has no 1/sqrt(d_k): out = P V does not see the scale, which sits inside the "
            "scores, S = Q K^T / sqrt(d_k); only dQ and dK carry it",
            "grad_v 里没有 1/sqrt(d_k)：缩放在分数里面，S = Q K^T / sqrt(d_k)，out = P V 碰不到"
            "它；只有 dQ 和 dK 带这个因子"))])


@at.check("grad_q equals autograd: dQ = dS K / √d_k", zh="grad_q 与自动求导一致：dQ = dS K / √d_k")
def _(mod, rng):
    inputs, _ = attention_inputs(rng)
    want = attention_autograd(*inputs[:4])[0]
    expect_close(call_attention_backward(mod, *inputs)[0], want, "grad_q", tr(
        "dP = dO V^T, dS = P * (dP - row sum of dP * P), dQ = dS K / sqrt(d_k)",
        "dP = dO V^T，dS = P * (dP - (dP * P) 的行和)，dQ = dS K / sqrt(d_k)"),
        attention_mistakes(*inputs, which=0))


@at.check("grad_k equals autograd: dK = dS^T Q / √d_k",
          zh="grad_k 与自动求导一致：dK = dS^T Q / √d_k")
def _(mod, rng):
    inputs, _ = attention_inputs(rng)
    want = attention_autograd(*inputs[:4])[1]
    expect_close(call_attention_backward(mod, *inputs)[1], want, "grad_k", tr(
        "dK = dS^T Q / sqrt(d_k): the keys' gradient sums over the queries",
        "dK = dS^T Q / sqrt(d_k)：键的梯度要对所有查询求和"),
        attention_mistakes(*inputs, which=1))


@at.check("masked keys get no gradient; an all-masked query gets zeros, not NaN",
          zh="被屏蔽的键没有梯度；所有键都被屏蔽的查询得到全 0，而不是 NaN")
def _(mod, rng):
    """Only what masking decides: finite everywhere, and exactly 0 where a key has weight 0 for
    every query (grad_k, grad_v) and where a query's keys are all blocked (grad_q). The values
    elsewhere are the grad-q/-k/-v checks' business, whose hints name the mistake (a missing
    1/sqrt(d_k) fails there, not here)."""
    inputs, _ = attention_inputs(rng, masked=True)
    got = call_attention_backward(mod, *inputs)
    weights = inputs[4]
    blocked_keys, empty_queries = ~weights.any(axis=-2), ~weights.any(axis=-1)
    expect_gradient_shapes(got, inputs)
    for name, g in zip(("grad_q", "grad_k", "grad_v"), got):
        expect_finite(g, name, MASKED_HINT)
    for name, g, rows, which in (
            ("grad_q", got[0], empty_queries, Text(
                "query {2} of sentence {0}, head {1}, has every key blocked",
                "第 {0} 个句子第 {1} 个头的查询 {2}，所有键都被屏蔽")),
            ("grad_k", got[1], blocked_keys, Text(
                "key {2} of sentence {0}, head {1}, is blocked for every query",
                "第 {0} 个句子第 {1} 个头的键 {2} 对所有查询都被屏蔽")),
            ("grad_v", got[2], blocked_keys, Text(
                "key {2} of sentence {0}, head {1}, is blocked for every query",
                "第 {0} 个句子第 {1} 个头的键 {2} 对所有查询都被屏蔽"))):
        g = as_numpy(g)
        moved = np.argwhere(rows & (g != 0).any(axis=-1))
        if len(moved):
            at = tuple(int(i) for i in moved[0])
            entry = f"{name}[{', '.join(map(str, at))}] = 0"
            raise CheckFailed(tr(f"{entry}: ", f"{entry}：") + str(which).format(*at),
                              fmt(g[at]), MASKED_HINT)
        expect_equal(g[rows], np.zeros_like(g[rows]), name, MASKED_HINT)  # kept as evidence


sm.keeps({
    "softmax_backward: value": ("shape of the weights; equals autograd through the softmax over "
                                "the keys", "agrees with central finite differences of the "
                                "masked softmax"),
    "softmax_backward: last-axis": "shape of the weights; equals autograd through the softmax "
                                   "over the keys",
    "softmax_backward: masked": "blocked keys get exactly 0; an all-masked row gets zeros, not NaN",
    "softmax_backward: leading-axes": "works for any number of leading axes, e.g. one row (T_k,)",
})
ln.keeps({
    "layer_norm_backward: grad-x": "grad_x equals autograd through LayerNorm (random weight and "
                                   "bias)",
    "layer_norm_backward: grad-weight": "grad_weight = sum of dL/dy * x_hat, grad_bias = sum of "
                                        "dL/dy, over every position",
    "layer_norm_backward: grad-bias": "grad_weight = sum of dL/dy * x_hat, grad_bias = sum of "
                                      "dL/dy, over every position",
    "layer_norm_backward: eps": "small activations (std ~ 1e-3): sigma = sqrt(var + eps), eps "
                                "inside the root",
    "layer_norm_backward: leading-axes": "works for a 2-D input (T, d_model)",
})
at.keeps({
    "attention_backward: shapes": "returns (grad_q, grad_k, grad_v) shaped like q, k, v (T_q != "
                                  "T_k, d_k != d_v)",
    "attention_backward: grad-v": "grad_v = P^T dL/d(out)",
    "attention_backward: grad-q": "grad_q equals autograd: dQ = dS K / √d_k",
    "attention_backward: grad-k": "grad_k equals autograd: dK = dS^T Q / √d_k",
    "attention_backward: masked": "masked keys get no gradient; an all-masked query gets zeros, "
                                  "not NaN",
})
