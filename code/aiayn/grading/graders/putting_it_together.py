"""Grader of the chapter "Putting it together": the parameter count in closed form, checked on
random configurations against the count on the model itself (``aiayn.lab.model_size
.count_parameters``, which builds ``aiayn.pt.model.Transformer`` on the meta device) and against
the course's formula ``parameter_formula``."""

from ...config import TransformerConfig
from ...lab.model_size import count_parameters as count_on_model
from ...lab.model_size import parameter_breakdown
from ..calls import calls_made
from ..core import CheckFailed, exercise, need
from ..language import Text, tr

ex = exercise("putting_it_together/count_parameters", "putting_it_together/count_parameters.py",
              "the number of parameters of the Transformer, by formula",
              zh="用公式算出 Transformer 的参数量")

TIED_TWICE = Text("with tie_output the pre-softmax projection IS the target embedding matrix "
                  "(§3.4): count that matrix once, not twice",
                  "tie_output 时，softmax 之前的投影就是目标语言的嵌入矩阵本身（§3.4）：这个矩阵只算"
                  "一次，不要算两次")
SHARED_TWICE = Text("with share_embeddings source and target use ONE matrix: count it once",
                    "share_embeddings 时，源语言和目标语言共用同一个矩阵：只算一次")
NO_NORMS = Text("you left out the LayerNorms: each has a gain and a bias of d_model values; two "
                "per encoder layer, three per decoder layer (+ one per stack in Pre-LN)",
                "你漏了 LayerNorm：每个都有 d_model 个增益和 d_model 个偏置；编码器每层两个，"
                "解码器每层三个（Pre-LN 时每个层堆叠再多一个）")
NO_FINAL_NORMS = Text("Pre-LN (norm_first) ends each stack with one more LayerNorm: "
                      "2 x 2 x d_model",
                      "Pre-LN（norm_first）在每个层堆叠的末尾还有一个 LayerNorm：2 x 2 x d_model")
NO_BIASES = Text("you left out the biases: every linear map (W^Q, W^K, W^V, W^O, W_1, W_2) has "
                 "one; only the output projection has none",
                 "你漏了偏置：每个线性映射（W^Q、W^K、W^V、W^O、W_1、W_2）都有偏置；只有输出投影"
                 "没有")
ONE_ATTENTION = Text("the decoder has TWO attentions per layer: masked self-attention and "
                     "cross-attention over the encoder's output",
                     "解码器每层有两个注意力：带掩码的自注意力，以及对编码器输出的交叉注意力")
NO_LEARNED = Text("learned positional embeddings are a (max_len, d_model) parameter",
                  "可学习的位置编码是一个 (max_len, d_model) 的参数")
SINUSOIDAL_COUNTED = Text("the sinusoidal encoding is computed, not learned: it has no "
                          "parameters", "正弦位置编码是算出来的，不是学出来的：它没有参数")


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
    found = [(total + c.tgt_vocab_size * d if c.tie_output else None, TIED_TWICE),
             (total + c.src_vocab_size * d if c.share_embeddings else None, SHARED_TWICE),
             (total - norms, NO_NORMS),
             (total - parts["final norms"] if c.norm_first else None, NO_FINAL_NORMS),
             (total - biases, NO_BIASES),
             (total - c.num_layers * 4 * (d * d + d), ONE_ATTENTION),
             (total - parts["positional"] if c.positional == "learned" else None, NO_LEARNED),
             (total + c.max_len * d if c.positional == "sinusoidal" else None,
              SINUSOIDAL_COUNTED)]
    return [(v, h) for v, h in found if v is not None]


def expect_count(mod, config, what):
    got = need(mod, "count_parameters")(config)
    want = count_on_model(config)
    assert want == sum(parameter_breakdown(config).values())  # the course's two counts agree
    if isinstance(got, bool) or not isinstance(got, int):
        raise CheckFailed(tr("a Python int", "一个 Python int"), f"{type(got).__name__} {got!r}",
                          tr("count with integer arithmetic (no / and no floats); return int(...)",
                             "用整数运算计数（不用 /，也不用浮点数）；返回 int(...)"))
    if got != want:
        diff = got - want
        hint = next((h for v, h in mistakes(config) if v == got), tr(
            "add up every weight matrix and bias of the model; compare your parts with "
            "aiayn.lab.model_size.parameter_breakdown(config)",
            "把模型的每个权重矩阵和偏置都加起来；把你的各部分与 "
            "aiayn.lab.model_size.parameter_breakdown(config) 对照"))
        raise CheckFailed(tr(f"{want:,} parameters for {what} ({config})",
                             f"{what}的参数量为 {want:,}：\n" + " " * 10 + str(config)),
                          f"{got:,} ({diff:+,})", hint)


@ex.check("the paper's base model with a shared 37000-token vocabulary",
          zh="论文的基础模型，共享一个 37000 个词元的词表")
def _(mod, rng):
    expect_count(mod, TransformerConfig(src_vocab_size=37000, tgt_vocab_size=37000,
                                        share_embeddings=True),
                 tr("the base model", "基础模型"))


@ex.check("random Post-LN configurations, tied output projection, sinusoidal positions",
          zh="随机的 Post-LN 配置，输出投影共享权重，正弦位置编码")
def _(mod, rng):
    for _ in range(5):
        expect_count(mod, random_config(rng), tr("a random configuration", "随机配置"))


@ex.check("shared embeddings, an untied output projection, learned positions, Pre-LN",
          zh="共享嵌入、不共享权重的输出投影、可学习的位置编码、Pre-LN")
def _(mod, rng):
    for fixed in (dict(share_embeddings=True), dict(tie_output=False),
                  dict(positional="learned"), dict(norm_first=True),
                  dict(share_embeddings=True, tie_output=False, positional="learned",
                       norm_first=True)):
        config = random_config(rng, **fixed)
        settings = ", ".join(f"{k}={v}" for k, v in fixed.items())
        expect_count(mod, config, tr(settings, f"配置 {settings} "))


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
                             "只用配置中的数字计算参数量"), tr(", ", "、").join(built[:3]),
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
