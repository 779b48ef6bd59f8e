"""Grader of the chapter "Putting it together": the parameter count in closed form, checked on
random configurations against the count on the model itself (``aiayn.lab.model_size
.count_parameters``, which builds ``aiayn.pt.model.Transformer`` on the meta device) and against
the course's formula ``parameter_formula``."""

from ...config import TransformerConfig
from ...lab.model_size import count_parameters as count_on_model
from ...lab.model_size import parameter_breakdown
from ..calls import calls_made
from ..core import CheckFailed, exercise, need
from ..language import tr

ex = exercise("putting_it_together/count_parameters", "putting_it_together/count_parameters.py",
              "the number of parameters of the Transformer, by formula")


def random_config(rng, **fixed) -> TransformerConfig:
    heads = int(rng.choice([1, 2, 4]))
    d_model = heads * int(rng.integers(2, 9)) * 2
    vocab = int(rng.integers(20, 200))
    options = dict(src_vocab_size=vocab, tgt_vocab_size=vocab + int(rng.integers(1, 50)),
                   d_model=d_model, num_heads=heads, num_layers=int(rng.integers(1, 4)),
                   d_ff=int(rng.integers(8, 100)), max_len=int(rng.integers(16, 100)))
    options.update(fixed)
    if options.get("share_embeddings"):
        options["tgt_vocab_size"] = options["src_vocab_size"]
    return TransformerConfig(**options)


def mistakes(c: TransformerConfig):
    """(value, hint) of the classic slips, computed from the course's breakdown."""
    parts, d = parameter_breakdown(c), c.d_model
    total = sum(parts.values())
    norms = c.num_layers * 5 * 2 * d + parts["final norms"]
    biases = c.num_layers * (3 * 4 * d + 2 * (c.d_ff + d))
    found = [(total + c.tgt_vocab_size * d if c.tie_output else None,
              "with tie_output the pre-softmax projection IS the target embedding matrix "
              "(§3.4): count that matrix once, not twice"),
             (total + c.src_vocab_size * d if c.share_embeddings else None,
              "with share_embeddings source and target use ONE matrix: count it once"),
             (total - norms, "you left out the LayerNorms: each has a gain and a bias of d_model "
              "values; two per encoder layer, three per decoder layer (+ one per stack in Pre-LN)"),
             (total - parts["final norms"] if c.norm_first else None,
              "Pre-LN (norm_first) ends each stack with one more LayerNorm: 2 x 2 x d_model"),
             (total - biases, "you left out the biases: every linear map (W^Q, W^K, W^V, W^O, "
              "W_1, W_2) has one; only the output projection has none"),
             (total - c.num_layers * 4 * (d * d + d), "the decoder has TWO attentions per layer: "
              "masked self-attention and cross-attention over the encoder's output"),
             (total - parts["positional"] if c.positional == "learned" else None,
              "learned positional embeddings are a (max_len, d_model) parameter"),
             (total + c.max_len * d if c.positional == "sinusoidal" else None,
              "the sinusoidal encoding is computed, not learned: it has no parameters")]
    return [(v, h) for v, h in found if v is not None]


def expect_count(mod, config, what):
    got = need(mod, "count_parameters")(config)
    want = count_on_model(config)
    assert want == sum(parameter_breakdown(config).values())  # the course's two counts agree
    if isinstance(got, bool) or not isinstance(got, int):
        raise CheckFailed("a Python int", f"{type(got).__name__} {got!r}",
                          "count with integer arithmetic (no / and no floats); return int(...)")
    if got != want:
        diff = got - want
        hint = next((h for v, h in mistakes(config) if v == got),
                    "add up every weight matrix and bias of the model; compare your parts with "
                    "aiayn.lab.model_size.parameter_breakdown(config)")
        raise CheckFailed(f"{want:,} parameters for {what} ({config})",
                          f"{got:,} ({diff:+,})", hint)


@ex.check("the paper's base model with a shared 37000-token vocabulary")
def _(mod, rng):
    expect_count(mod, TransformerConfig(src_vocab_size=37000, tgt_vocab_size=37000,
                                        share_embeddings=True), "the base model")


@ex.check("random Post-LN configurations, tied output projection, sinusoidal positions")
def _(mod, rng):
    for _ in range(5):
        expect_count(mod, random_config(rng), "a random configuration")


@ex.check("shared embeddings, an untied output projection, learned positions, Pre-LN")
def _(mod, rng):
    for fixed in (dict(share_embeddings=True), dict(tie_output=False),
                  dict(positional="learned"), dict(norm_first=True),
                  dict(share_embeddings=True, tie_output=False, positional="learned",
                       norm_first=True)):
        config = random_config(rng, **fixed)
        expect_count(mod, config, ", ".join(f"{k}={v}" for k, v in fixed.items()))


FORMULA = "a formula: no model is built (and no count of the course's is called)"


@ex.check(FORMULA, zh="按公式计算：不搭建模型（也不调用课程的计数函数）")
def _(mod, rng):
    import torch  # only here: the other checks of this grader need no PyTorch

    config = random_config(rng)
    _, reached, _ = calls_made(need(mod, "count_parameters"), config,
                               watch={torch.nn.Module.__init__: "torch.nn.Module.__init__"})
    built = list(dict.fromkeys(n for n in reached if not n.startswith("aiayn/config.py")))
    if built:
        raise CheckFailed(tr("a count from the configuration's numbers alone",
                             "只用配置中的数字计算参数量"), ", ".join(built[:3]),
                          tr("add up the sizes listed in the docstring with d = config.d_model, "
                             "N = config.num_layers, ...: building the model (or calling the "
                             "course's count, which builds it) answers without the formula "
                             "this exercise is about",
                             "用 d = config.d_model、N = config.num_layers 等把文档字符串列出的"
                             "各部分大小加起来：搭建模型（或调用会搭建模型的课程计数函数）就绕开了"
                             "本练习要推导的公式"))


ALL_CHECKS = ("the paper's base model with a shared 37000-token vocabulary",
              "random Post-LN configurations, tied output projection, sinusoidal positions",
              "shared embeddings, an untied output projection, learned positions, Pre-LN")
ex.keeps({
    "count_parameters: count": ALL_CHECKS,
    "count_parameters: python-int": ALL_CHECKS,
    "count_parameters: formula": FORMULA,
})
