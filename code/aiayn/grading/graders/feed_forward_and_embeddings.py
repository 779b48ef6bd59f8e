"""Grader of the chapter "Feed-forward network and embeddings": the position-wise FFN in NumPy
with weights in PyTorch's (out, in) layout, checked against
``aiayn.np.feedforward.PositionwiseFeedForward`` with the same random weights, on shapes where
d_ff != d_model (a missing transpose cannot multiply) and where d_ff = d_model (it can, and
gives wrong numbers)."""

import numpy as np

from ...np.feedforward import PositionwiseFeedForward
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape, raised
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("feed_forward_and_embeddings/feed_forward",
              "feed_forward_and_embeddings/feed_forward.py",
              "FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 with (out, in) weights",
              zh="FFN(x) = max(0, x W_1 + b_1) W_2 + b_2，权重按 `(out, in)` 存放")

LAYOUT = Text("the weights are in PyTorch's (out_features, in_features) layout: w1 is (d_ff, "
              "d_model), so the paper's x W_1 is x @ w1.T (and likewise x @ w2.T)",
              "权重按 PyTorch 的 (out_features, in_features) 布局存放：w1 的形状是 "
              "(d_ff, d_model)，所以论文里的 x W_1 是 x @ w1.T（x @ w2.T 同理）")
NO_RELU = Text("you forgot the ReLU: without max(0, .) the two linear maps collapse into one "
               "linear map. Apply np.maximum(..., 0.0) to the hidden layer (d_ff), between the "
               "two maps",
               "你忘了 ReLU：没有 max(0, .)，两个线性映射就合并成了一个线性映射。在两个映射之间，"
               "对隐藏层（d_ff）用 np.maximum(..., 0.0)")
RELU_AFTER = Text("you applied the ReLU after the second map as well: FFN(x) = max(0, x W_1 + "
                  "b_1) W_2 + b_2 has one ReLU, on the hidden layer only; the output can be "
                  "negative",
                  "你在第二个映射之后也用了 ReLU：FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 只有一个 "
                  "ReLU，只作用在隐藏层上；输出可以是负数")
RELU_BEFORE_BIAS = Text("you added b_1 after the ReLU: the bias belongs inside, "
                        "max(0, x W_1 + b_1)",
                        "你在 ReLU 之后才加 b_1：偏置应在里面，max(0, x W_1 + b_1)")
FORMULA = "max(0, x @ w1.T + b1) @ w2.T + b2"


def setup(rng, square=False):
    B, T = int(rng.integers(2, 4)), int(rng.integers(3, 6))
    d_model = T + int(rng.integers(2, 5))
    d_ff = d_model if square else 4 * d_model  # the paper's ratio, 2048 / 512
    ffn = PositionwiseFeedForward(d_model, d_ff)
    for linear in (ffn.w_1, ffn.w_2):  # fresh weights of this run's seed, biases not small
        out_features, in_features = linear.weight.shape
        linear.weight = rng.standard_normal((out_features, in_features)) / np.sqrt(in_features)
        linear.bias = 0.5 * rng.standard_normal(linear.bias.shape)
    return rng.standard_normal((B, T, d_model)), ffn


def weights(ffn):
    return ffn.w_1.weight, ffn.w_1.bias, ffn.w_2.weight, ffn.w_2.bias


def mistakes(x, ffn):
    w1, b1, w2, b2 = weights(ffn)
    relu = lambda z: np.maximum(z, 0.0)  # noqa: E731
    found = [((x @ w1.T + b1) @ w2.T + b2, NO_RELU),
             (relu(relu(x @ w1.T + b1) @ w2.T + b2), RELU_AFTER),
             (relu(x @ w1.T) @ w2.T + b1 @ w2.T + b2, RELU_BEFORE_BIAS)]
    if w1.shape[0] == w1.shape[1]:  # square weights: the (in, out) reading multiplies too
        found += [(relu(x @ w1 + b1) @ w2 + b2, LAYOUT),
                  ((x @ w1 + b1) @ w2 + b2, LAYOUT + Text("; and ", "；而且") + NO_RELU)]
    return found


def call(mod, x, ffn):
    try:
        return need(mod, "feed_forward")(x.copy(), *(a.copy() for a in weights(ffn)))
    except ValueError as error:  # matmul's shape error: the usual sign of the (in, out) reading
        if "matmul" not in str(error):
            raise
        message = "ValueError: " + str(error).splitlines()[0][:90]
        raise CheckFailed(tr("an output of shape (B, T, d_model)", "形状为 (B, T, d_model) 的输出"),
                          tr(message, "抛出了异常：\n" + " " * 10 + message), LAYOUT) from None


@ex.check("shape (B, T, d_model); equals the course's FFN with the same weights",
          zh="形状为 (B, T, d_model)；权重相同时与课程的 FFN 一致")
def _(mod, rng):
    x, ffn = setup(rng)
    got = call(mod, x, ffn)
    expect_array(got, "numpy", "output")
    expect_shape(got, x.shape, "output", tr("the FFN maps d_model to d_ff and back to d_model",
                                            "FFN 把 d_model 映射到 d_ff，再映射回 d_model"))
    expect_close(got, ffn(x), "output", FORMULA, mistakes(x, ffn))


@ex.check("square weights (d_ff = d_model): the (out, in) layout still matters",
          zh="方阵权重（d_ff = d_model）：`(out, in)` 布局照样要紧")
def _(mod, rng):
    x, ffn = setup(rng, square=True)
    expect_close(call(mod, x, ffn), ffn(x), "output", Text(
        "even when the shapes allow x @ w1, the paper's W_1 is w1.T: ",
        "即使形状允许 x @ w1，论文里的 W_1 也是 w1.T：") + LAYOUT, mistakes(x, ffn))


@ex.check("position-wise: works for (T, d_model) and for one position alone",
          zh="逐位置：对 (T, d_model) 和单独一个位置都能算")
def _(mod, rng):
    x, ffn = setup(rng)
    hint = tr("use x @ w1.T (matmul over the last axis), not a fixed number of axes",
              "用 x @ w1.T（在最后一维上做矩阵乘法），不要写死维数")
    two_d = tr("output for a 2-D input (T, d_model)", "二维输入 (T, d_model) 的输出")
    try:
        got = call(mod, x[0], ffn)
    except ValueError as error:  # einsum's or a reshape's: written for three axes
        raise CheckFailed(tr("an output for a 2-D input (T, d_model)",
                             "对二维输入 (T, d_model) 也能给出输出"), raised(error), hint) from None
    expect_close(got, ffn(x[:1])[0], two_d, hint, mistakes(x[0], ffn))
    expect_close(call(mod, x[:1, :1], ffn), ffn(x)[:1, :1], tr(
        "position (0, 0) alone vs in its batch", "位置 (0, 0) 单独计算与在整个批次中计算"), tr(
        "each position goes through the FFN on its own: no statistics or sums over the batch or "
        "time axes", "每个位置各自通过 FFN：不要在批次维或时间维上求统计量或求和"),
        mistakes(x[:1, :1], ffn))


UNCHANGED = "leaves its inputs unchanged"


@ex.check(UNCHANGED, zh="不修改输入")
def _(mod, rng):
    x, ffn = setup(rng)
    got = call_on_read_only(need(mod, "feed_forward"), dict(zip(
        ("x", "w1", "b1", "w2", "b2"), (x, *weights(ffn)))), tr(
        "the caller still needs its arrays: build new ones (h = x @ w1.T + b1, np.maximum(h, 0)) "
        "instead of writing into x or the weights (x += ..., out=x)",
        "调用者还要用这些数组：请生成新数组（h = x @ w1.T + b1，np.maximum(h, 0)），不要写入 x 或"
        "权重（x += ...，out=x）"))
    expect_close(got, ffn(x), "output", FORMULA, mistakes(x, ffn))


FIRST = "shape (B, T, d_model); equals the course's FFN with the same weights"
ex.keeps({
    "feed_forward: value": FIRST,
    "feed_forward: layout": (FIRST, "square weights (d_ff = d_model): the (out, in) layout "
                                    "still matters"),
    "feed_forward: position-wise": "position-wise: works for (T, d_model) and for one position "
                                   "alone",
    "feed_forward: inputs-unchanged": UNCHANGED,
})
