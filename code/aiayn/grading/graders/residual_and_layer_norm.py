"""Grader of the chapter "Residual connections and layer normalisation": LayerNorm in NumPy,
checked against ``aiayn.np.normalization.LayerNorm`` (random gain and bias) and
``torch.nn.functional.layer_norm``, on random shapes whose batch, time and feature sizes differ
so that a wrong axis cannot hide, and on small activations where ``std + eps`` shows."""

import numpy as np
import torch

from ...np.normalization import LayerNorm
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape, raised
from ..core import CheckFailed, exercise, need
from ..language import tr

ex = exercise("residual_and_layer_norm/layer_norm", "residual_and_layer_norm/layer_norm.py",
              "LayerNorm over the features: (x - mean) / sqrt(var + eps) * weight + bias")

UNBIASED = ("you used the unbiased variance (divided by d_model - 1, e.g. np.var(..., ddof=1) "
            "or torch.var's default): LayerNorm uses the biased one, the mean of (x - mean)^2")
STD_EPS = ("you divided by (std + eps): the paper's LayerNorm (and nn.LayerNorm) divides by "
           "sqrt(var + eps), with eps inside the root; the two differ most for small activations")
BATCH_AXIS = ("you normalised over the batch axis (axis 0), which is BatchNorm's axis: "
              "LayerNorm normalises each position over its own features, the LAST axis "
              "(axis=-1, keepdims=True)")
TIME_AXIS = ("you normalised over the time axis (axis 1): LayerNorm normalises each position "
             "over its features, the LAST axis (axis=-1, keepdims=True)")
AFFINE = ("multiply by weight and add bias after normalising: (x - mean) / sqrt(var + eps) * "
          "weight + bias")


def setup(rng, scale=1.0):
    B, T = int(rng.integers(2, 5)), int(rng.integers(5, 9))
    d = T + int(rng.integers(2, 6))  # B != T != d: each axis has its own size
    x = (rng.standard_normal((B, T, d)) + rng.standard_normal((B, T, 1))) * scale
    norm = LayerNorm(d)
    norm.weight, norm.bias = 1.0 + 0.5 * rng.standard_normal(d), rng.standard_normal(d)
    return x, norm


def mistakes(x, norm):
    w, b, eps = norm.weight, norm.bias, norm.eps

    def over(axis, ddof=0, std_eps=False):
        mean = x.mean(axis=axis, keepdims=True)
        if std_eps:
            return (x - mean) / (x.std(axis=axis, keepdims=True, ddof=ddof) + eps) * w + b
        return (x - mean) / np.sqrt(x.var(axis=axis, keepdims=True, ddof=ddof) + eps) * w + b

    plain = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + eps)
    return [(over(-1, ddof=1), UNBIASED), (over(-1, std_eps=True), STD_EPS),
            (over(-1, ddof=1, std_eps=True), STD_EPS + "; and " + UNBIASED),
            (over(0), BATCH_AXIS), (over(1), TIME_AXIS), (plain, AFFINE)]


def call(mod, x, norm):
    return need(mod, "layer_norm")(x.copy(), norm.weight.copy(), norm.bias.copy(), norm.eps)


@ex.check("shape of x; equals the course's LayerNorm on (B, T, d_model)")
def _(mod, rng):
    x, norm = setup(rng)
    got = call(mod, x, norm)
    expect_array(got, "numpy", "output")
    expect_shape(got, x.shape, "output", "LayerNorm returns one value per input value")
    expect_close(got, norm(x), "output", "(x - mean) / sqrt(var + eps) * weight + bias, mean "
                 "and var over the last axis", mistakes(x, norm))


@ex.check("equals torch.nn.functional.layer_norm on small activations (std ~ 1e-3)")
def _(mod, rng):
    x, norm = setup(rng, scale=1e-3)
    want = torch.nn.functional.layer_norm(
        torch.from_numpy(x), (x.shape[-1],), torch.from_numpy(norm.weight),
        torch.from_numpy(norm.bias), norm.eps).numpy()
    expect_close(call(mod, x, norm), want, "output", "eps belongs inside the square root: "
                 "sqrt(var + eps)", mistakes(x, norm), atol=1e-9)


@ex.check("one position's output depends on that position only")
def _(mod, rng):
    x, norm = setup(rng)
    alone = call(mod, x[:1, :1], norm)
    # Statistics over an axis of size 1 (batch or time) make x - mean = 0: the output is the bias.
    expect_close(alone, norm(x[:1, :1]), "a single position, normalised alone",
                 "normalise over the features, the last axis (axis=-1, keepdims=True)",
                 [(np.broadcast_to(norm.bias, alone.shape), "every value came out as the bias: "
                   "you took mean and variance over an axis of size 1 here (batch or time), "
                   "so x - mean = 0. " + BATCH_AXIS)], atol=1e-10)
    expect_close(call(mod, x, norm)[:1, :1], alone, "position (0, 0) in its batch vs alone",
                 "the other sentences and positions must not change a position's output, "
                 "unlike BatchNorm: normalise over the last axis only", atol=1e-10)


@ex.check("works for any number of leading axes, e.g. (T, d_model)")
def _(mod, rng):
    x, norm = setup(rng)
    hint = ("use axis=-1, not a fixed axis number, so the same code handles (T, d_model) "
            "and (B, T, d_model)")
    try:
        got = call(mod, x[0], norm)
    except (ValueError, IndexError) as error:  # AxisError: a fixed axis number 2
        raise CheckFailed("an output for a 2-D input (T, d_model)", raised(error),
                          hint) from None
    expect_close(got, norm(x[0]), "output for a 2-D input", hint)


UNCHANGED = "leaves x unchanged"


@ex.check(UNCHANGED, zh="不修改 x")
def _(mod, rng):
    x, norm = setup(rng)
    got = call_on_read_only(need(mod, "layer_norm"), {
        "x": x, "weight": norm.weight, "bias": norm.bias, "eps": norm.eps}, tr(
        "the caller (the residual stream) still needs x: compute into new arrays, "
        "centred = x - mean, instead of x -= mean or x /= std",
        "调用者（残差通路）还要用 x：请把结果算进新数组，centred = x - mean，不要写 x -= mean "
        "或 x /= std"))
    expect_close(got, norm(x), "output", "(x - mean) / sqrt(var + eps) * weight + bias",
                 mistakes(x, norm))


ex.keeps({
    "layer_norm: value": ("shape of x; equals the course's LayerNorm on (B, T, d_model)",
                          "equals torch.nn.functional.layer_norm on small activations (std ~ "
                          "1e-3)", "one position's output depends on that position only"),
    "layer_norm: leading-axes": "works for any number of leading axes, e.g. (T, d_model)",
    "layer_norm: input-unchanged": UNCHANGED,
})
