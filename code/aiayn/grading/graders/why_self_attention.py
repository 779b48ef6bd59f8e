"""Grader of the chapter "Why self-attention": the convolutional layer of Table 1 in NumPy,
checked against ``aiayn.lab.layer_types_np.Convolution`` and ``torch.nn.Conv1d`` with the same
random weights, with d_in != d_out (a transposed weight cannot multiply) and kernels that are
not symmetric (a flipped kernel gives other numbers)."""

import numpy as np
import torch

from ...lab.layer_types_np import Convolution
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("why_self_attention/convolution", "why_self_attention/convolution.py",
              "a centred 1-D convolution over time, y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j",
              zh="沿时间的居中一维卷积：y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j")

FLIPPED = Text("you flipped the kernel: tap j must read position t + (j - (k-1)/2) D, so tap 0 "
               "is the earliest position. nn.Conv1d (and every layer of §4) computes a cross-"
               "correlation; the textbook convolution's flip is not done",
               "你把卷积核翻转了：第 j 个抽头要读位置 t + (j - (k-1)/2) D，所以第 0 个抽头对应最早"
               "的位置。nn.Conv1d（以及 §4 里的每一种层）计算的是互相关，不做教科书中卷积的那次翻转")
ONE_SIDED = Text("your output is shifted: you padded (k-1) D zeros on one side only, which makes "
                 "a causal convolution. The layer is centred: pad (k-1)/2 * D zeros at each end",
                 "你的输出错位了：你只在一侧补了 (k-1) D 个零，那是因果卷积。这一层是居中的：两端"
                 "各补 (k-1)/2 * D 个零")
NO_DILATION = Text("you ignored the dilation: neighbouring taps must be D positions apart, "
                   "x_{t + (j - (k-1)/2) D}, and the padding (k-1)/2 * D at each end",
                   "你忽略了膨胀系数：相邻抽头要相隔 D 个位置，x_{t + (j - (k-1)/2) D}，两端各补 "
                   "(k-1)/2 * D 个零")
SAME_LENGTH = Text("the output keeps the length T: pad (k-1)/2 * D zeros before the first and "
                   "after the last position (a 'valid' convolution would lose k - 1 positions)",
                   "输出保持长度 T：在第一个位置之前和最后一个位置之后各补 (k-1)/2 * D 个零"
                   "（不补零的卷积会少 k - 1 个位置）")


def setup(rng, k=3, dilation=1, T=None):
    B = int(rng.integers(2, 4))
    T = T or int(rng.integers(6, 10))
    d_in = int(rng.integers(2, 5))
    d_out = d_in + int(rng.integers(1, 3))
    conv = Convolution(d_in, d_out, k, dilation)
    conv.weight = rng.standard_normal((d_out, d_in, k))  # no symmetry a flip could hide behind
    conv.bias = rng.standard_normal(d_out)
    return rng.standard_normal((B, T, d_in)), conv


def reference(x, weight, bias, dilation, before, after):
    """The centred layer's arithmetic with ``before`` / ``after`` zeros: the classic slips."""
    k, T = weight.shape[2], x.shape[1]
    padded = np.pad(x, [(0, 0), (before, after), (0, 0)])
    return bias + sum(padded[:, j * dilation:j * dilation + T] @ weight[:, :, j].T for j in range(k))


def mistakes(x, conv, dilation):
    w, b = conv.weight, conv.bias
    k = w.shape[2]
    reach, span = (k - 1) // 2 * dilation, (k - 1) * dilation
    found = [(reference(x, w[:, :, ::-1], b, dilation, reach, reach), FLIPPED),
             (reference(x, w, b, dilation, span, 0), ONE_SIDED),
             (reference(x, w, b, dilation, 0, span), ONE_SIDED)]
    if dilation > 1:
        found.append((reference(x, w, b, 1, (k - 1) // 2, (k - 1) // 2), NO_DILATION))
    return found


def call(mod, x, conv, dilation):
    got = need(mod, "convolution")(x.copy(), conv.weight.copy(), conv.bias.copy(), dilation)
    expect_array(got, "numpy", "output")
    if np.shape(got)[:2] != x.shape[:2]:
        shape = x.shape[:2] + (conv.weight.shape[0],)
        raise CheckFailed(tr(f"an output of shape {shape}", f"形状为 {shape} 的输出"),
                          tr(f"shape {tuple(np.shape(got))}", f"形状为 {tuple(np.shape(got))}"),
                          SAME_LENGTH)
    expect_shape(got, x.shape[:2] + (conv.weight.shape[0],), "output", tr(
        "the output has d_out features: weight is (d_out, d_in, k), and tap j maps x (.., d_in) "
        "with weight[:, :, j].T",
        "输出有 d_out 个特征：weight 的形状是 (d_out, d_in, k)，第 j 个抽头用 weight[:, :, j].T "
        "映射 x (.., d_in)"))
    return got


@ex.check("shape (B, T, d_out); equals the course's Convolution, k = 3",
          zh="形状为 (B, T, d_out)；k = 3 时与课程的 Convolution 一致")
def _(mod, rng):
    x, conv = setup(rng)
    expect_close(call(mod, x, conv, 1), conv(x), "output", tr(
        "y_t = b + sum_j x_{t + j - 1} W_j, with zeros beyond the ends",
        "y_t = b + sum_j x_{t + j - 1} W_j，两端之外取 0"), mistakes(x, conv, 1))


@ex.check("wider kernels and dilation D: taps D positions apart",
          zh="更宽的卷积核和膨胀系数 D：抽头相隔 D 个位置")
def _(mod, rng):
    for k, dilation in ((5, 1), (3, 2), (5, 3)):
        x, conv = setup(rng, k, dilation)
        expect_close(call(mod, x, conv, dilation), conv(x), tr(
            f"output (k = {k}, D = {dilation})", f"输出（k = {k}，D = {dilation}）"), tr(
            "tap j reads x_{t + (j - (k-1)/2) D}", "第 j 个抽头读 x_{t + (j - (k-1)/2) D}"),
            mistakes(x, conv, dilation))


@ex.check("sequences shorter than the kernel: everything beyond the ends is zero",
          zh="序列比卷积核还短：两端之外全部取 0")
def _(mod, rng):
    x, conv = setup(rng, k=7, T=2)
    expect_close(call(mod, x, conv, 1), conv(x), tr("output (T = 2, k = 7)", "输出（T = 2，k = 7）"),
                 SAME_LENGTH, mistakes(x, conv, 1))


@ex.check("equals torch.nn.Conv1d with the same weights (which reads (B, d_in, T))",
          zh="权重相同时与 torch.nn.Conv1d 一致（它读入的形状是 (B, d_in, T)）")
def _(mod, rng):
    x, conv = setup(rng, k=5, dilation=2)
    d_out, d_in, k = conv.weight.shape
    ref = torch.nn.Conv1d(d_in, d_out, k, padding=(k - 1) // 2 * 2, dilation=2).double()
    with torch.no_grad():
        ref.weight.copy_(torch.from_numpy(conv.weight))
        ref.bias.copy_(torch.from_numpy(conv.bias))
        want = ref(torch.from_numpy(x).transpose(1, 2)).transpose(1, 2).numpy()
    expect_close(call(mod, x, conv, 2), want, "output", tr(
        "nn.Conv1d(d_in, d_out, k, padding=(k-1)/2 * D, dilation=D) on x.transpose(1, 2)",
        "对 x.transpose(1, 2) 做 nn.Conv1d(d_in, d_out, k, padding=(k-1)/2 * D, dilation=D)"),
        mistakes(x, conv, 2))


@ex.check("output t depends on x_{t - (k-1)/2 D} .. x_{t + (k-1)/2 D} only",
          zh="输出 t 只取决于 x_{t - (k-1)/2 D} .. x_{t + (k-1)/2 D}")
def _(mod, rng):
    x, conv = setup(rng, k=3, dilation=2, T=12)
    before = call(mod, x, conv, 2)
    changed = x.copy()
    changed[:, 6] += 1.0  # position 6 reaches outputs 4, 6 and 8 only
    moved = np.abs(call(mod, changed, conv, 2) - before).max(axis=(0, 2)) > 1e-12
    if moved.nonzero()[0].tolist() != [4, 6, 8]:
        raise CheckFailed(tr("changing x_6 to move outputs 4, 6 and 8 (k = 3, D = 2)",
                             "改动 x_6 只影响输出 4、6 和 8（k = 3，D = 2）"),
                          tr(f"it moved outputs {moved.nonzero()[0].tolist()}",
                             f"影响了输出 {moved.nonzero()[0].tolist()}"), NO_DILATION
                          if moved.nonzero()[0].tolist() == [5, 6, 7] else ONE_SIDED)


UNCHANGED = "leaves its inputs unchanged"


@ex.check(UNCHANGED, zh="不修改输入")
def _(mod, rng):
    x, conv = setup(rng, k=3, dilation=2)
    got = call_on_read_only(need(mod, "convolution"), {
        "x": x, "weight": conv.weight, "bias": conv.bias, "dilation": 2}, tr(
        "the caller still needs its arrays: pad into a new array (np.pad) and index the taps "
        "(weight[:, :, j]) instead of flipping, padding or reshaping the inputs in place",
        "调用者还要用这些数组：补零时生成新数组（np.pad），按下标取各个抽头（weight[:, :, j]），"
        "不要原地翻转、补零或改变输入的形状"))
    expect_close(got, conv(x), "output", "y_t = b + sum_j x_{t + (j - (k-1)/2) D} W_j",
                 mistakes(x, conv, 2))


FIRST = "shape (B, T, d_out); equals the course's Convolution, k = 3"
ex.keeps({
    "convolution: same-length": (FIRST, "sequences shorter than the kernel: everything beyond "
                                        "the ends is zero"),
    "convolution: taps": (FIRST, "equals torch.nn.Conv1d with the same weights (which reads "
                                 "(B, d_in, T))"),
    "convolution: dilation": ("wider kernels and dilation D: taps D positions apart",
                              "output t depends on x_{t - (k-1)/2 D} .. x_{t + (k-1)/2 D} only"),
    "convolution: inputs-unchanged": UNCHANGED,
})
