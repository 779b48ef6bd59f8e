"""Grader of the chapter "Modern attention": grouped-query attention in PyTorch, ``repeat_kv``
and ``GroupedQueryAttention``. The reader's module gets the weights of the course's
(``aiayn.pt.gqa.GroupedQueryAttention``; with as many key/value heads as query heads,
``aiayn.pt.attention.MultiHeadAttention``, the paper's) and both run on the same float64 inputs,
with T_q != T_k and 1 < num_kv_heads < num_heads. Two classic ways of sharing heads wrongly
(``torch.repeat``'s order, head i // num_kv_heads) are recomputed here so that a failure
names them; the course's module is checked against ``F.scaled_dot_product_attention(...,
enable_gqa=True)`` in tests/test_after_gqa.py."""

import torch
from torch import nn

from ...pt import attention as course
from ...pt.gqa import GroupedQueryAttention as CourseGQA
from ...pt.gqa import repeat_kv as course_repeat_kv
from ..calls import calls_made
from ..compare import as_numpy, expect_array, expect_close, expect_finite, expect_shape
from ..core import CheckFailed, exercise, need
from ..language import Text, tr
from ._attention import ALL_MASKED_HINT, MASK_HINT, all_masked_row, padding
from ._modules import build, copy_weights, tensor

ex = exercise("modern_attention/grouped_query", "modern_attention/grouped_query.py",
              "grouped-query attention: num_heads query heads share num_kv_heads key/value heads",
              zh="分组查询注意力：num_heads 个查询头共用 num_kv_heads 个键/值头")

TILED = Text("you repeated the key/value heads in torch.repeat's order (0, 1, 0, 1, ...): "
             "query head i then reads key/value head i % num_kv_heads. A group is consecutive "
             "query heads: head i reads head i // (num_heads / num_kv_heads), the order of "
             "x.repeat_interleave(group, dim=1) (0, 0, 1, 1, ...)",
             "你按 torch.repeat 的顺序（0, 1, 0, 1, ...）重复了键/值头：这样第 i 个查询头读的是第 "
             "i % num_kv_heads 个键/值头。一组是相邻的几个查询头：第 i 个头读第 "
             "i // (num_heads / num_kv_heads) 个键/值头，即 x.repeat_interleave(group, dim=1) "
             "的顺序（0, 0, 1, 1, ...）")
BY_G = Text("query head i read key/value head i // num_kv_heads: divide by the group's size, "
            "num_heads // num_kv_heads, not by the number of groups. With num_kv_heads = "
            "num_heads every query head then read head 0",
            "第 i 个查询头读的是第 i // num_kv_heads 个键/值头：要除以每组的大小 "
            "num_heads // num_kv_heads，而不是组数。这样在 num_kv_heads = num_heads 时，每个查询头"
            "读的都是第 0 个头")
FULL_WIDTH = Text("your w_k and w_v give every query head its own key and value head, as the "
                  "paper's do: a grouped-query layer computes only num_kv_heads of them, "
                  "nn.Linear(d_model, num_kv_heads * d_k). That is where the cache and the "
                  "projections shrink by num_heads / num_kv_heads",
                  "你的 w_k 和 w_v 像论文那样给每个查询头一个自己的键头和值头：分组查询注意力层只算 "
                  "num_kv_heads 个，即 nn.Linear(d_model, num_kv_heads * d_k)。缓存和投影正是在这里"
                  "缩小为原来的 num_kv_heads / num_heads")
FOLDED = Text("you folded each group of query heads into the time axis, (B, num_kv_heads, "
              "group * T_q, d_k), and returned the weights that way: reshape them back to "
              "(B, num_heads, T_q, T_k), one map per query head",
              "你把每组查询头折进了时间维，(B, num_kv_heads, group * T_q, d_k)，并且就这样返回了"
              "注意力权重：要把它们 reshape 回 (B, num_heads, T_q, T_k)，每个查询头一张图")
IGNORED = Text("the mask was ignored: pass it to the attention, where it broadcasts over "
               "every query head",
               "掩码被忽略了：要把它传给注意力，它会在所有查询头上广播")
SHARED_VALUE = Text("query head i reads key/value head i // (num_heads / num_kv_heads): project "
                    "the keys and values to num_kv_heads heads, repeat each for its group "
                    "(repeat_kv), attend, merge the heads, project with w_o",
                    "第 i 个查询头读第 i // (num_heads / num_kv_heads) 个键/值头：把键和值投影成 "
                    "num_kv_heads 个头，每个头按组重复（repeat_kv），做注意力，合并各头，再用 w_o "
                    "投影")


def sizes(rng):
    """B, num_heads, num_kv_heads, d_k with 1 < num_kv_heads < num_heads (4 and 2, 6 and 3,
    or 9 and 3)."""
    G = int(rng.integers(2, 4))
    group = int(rng.integers(2, G + 1))  # group <= G: head i // G is a head, a wrong one
    return int(rng.integers(2, 4)), G * group, G, int(rng.integers(2, 5))


def attend_with(theirs, H, G, query, key, value, mask, order):
    """The course's weights, query head i reading key/value head ``order[i]``: (out, weights)."""
    with torch.no_grad():
        q = course.split_heads(theirs.w_q(query), H)
        k = course.split_heads(theirs.w_k(key), G)[:, order]
        v = course.split_heads(theirs.w_v(value), G)[:, order]
        out, weights = course.scaled_dot_product_attention(q, k, v, mask)
        return theirs.w_o(course.merge_heads(out)), weights


def sharing_mistakes(theirs, H, G, query, key, value, mask=None):
    """[(output, weights), hint] of the two wrong orders (i // G where it names a head)."""
    orders = [(torch.arange(H) % G, TILED)]
    if (H - 1) // G < G:  # always in sizes(); with G = 1 it would not be
        orders.append((torch.arange(H) // G, BY_G))
    return [(attend_with(theirs, H, G, query, key, value, mask, order), hint)
            for order, hint in orders if not torch.equal(order, torch.arange(H) // (H // G))]


LAYERS = ("w_q", "w_k", "w_v", "w_o")


def linear(mine, name):
    """The reader's layer ``name``, an nn.Linear, or a failure that names the names."""
    layer = getattr(mine, name, None)
    if not isinstance(layer, nn.Linear):
        found = sorted(n for n, m in mine.named_children() if isinstance(m, nn.Linear))
        raise CheckFailed(tr(f"a layer {name} = nn.Linear(...)", f"一个层 {name} = nn.Linear(...)"),
                          tr(f"{'no such attribute' if layer is None else type(layer).__name__}"
                             f" (your nn.Linear layers: {', '.join(found) or 'none'})",
                             f"{'没有这个属性' if layer is None else type(layer).__name__}"
                             f"（你的 nn.Linear 层：{'、'.join(found) or '无'}）"),
                          tr("name the projections w_q, w_k, w_v and w_o, as the course's "
                             "MultiHeadAttention does (Hugging Face's Llama calls them q_proj, "
                             "k_proj, v_proj, o_proj): the grader copies the course's weights "
                             "into them by name",
                             "把四个投影命名为 w_q、w_k、w_v 和 w_o，和课程的 MultiHeadAttention "
                             "一样（Hugging Face 的 Llama 叫 q_proj、k_proj、v_proj、o_proj）："
                             "评分程序按名字把课程的权重复制进去"))
    return layer


def layer_names(mine, d_model, H):
    """w_q, w_k, w_v, w_o: nn.Linear with a bias; w_q and w_o d_model -> d_model."""
    for name in LAYERS:
        if linear(mine, name).bias is None:
            raise CheckFailed(tr(f"{name} with a bias", f"{name} 带偏置"), "bias=False",
                              tr("the paper's projections, and the course's, have a bias "
                                 "(Llama leaves it out): nn.Linear(in, out) keeps it by default",
                                 "论文和课程的投影都带偏置（Llama 去掉了它）：`nn.Linear(in, out)` "
                                 "默认就有"))
    for name in ("w_q", "w_o"):
        expect_shape(mine.get_submodule(name).weight, (d_model, d_model), f"{name}.weight", tr(
            "w_q maps d_model to num_heads * d_k = d_model features, w_o maps them back; "
            "nn.Linear(in, out) stores its weight as (out, in)",
            "w_q 把 d_model 映射到 num_heads * d_k = d_model 个特征，w_o 再映射回来；"
            "`nn.Linear(in, out)` 把权重存成 `(out, in)`"))


def cache_shapes(mine, d_model, H, G):
    """w_k and w_v: d_model -> G * d_k (the hint names the paper's width when they have it)."""
    d_k = d_model // H
    for name in ("w_k", "w_v"):
        weight = linear(mine, name).weight
        hint = FULL_WIDTH if tuple(weight.shape) == (H * d_k, d_model) else tr(
            "nn.Linear(in, out) stores its weight as (out, in): "
            f"nn.Linear(d_model, num_kv_heads * d_k) is ({G * d_k}, {d_model}) here",
            "`nn.Linear(in, out)` 把权重存成 `(out, in)`：这里 "
            f"nn.Linear(d_model, num_kv_heads * d_k) 的形状是 ({G * d_k}, {d_model})")
        expect_shape(weight, (G * d_k, d_model), f"{name}.weight", hint)


def pair(mod, rng, H=None, G=None):
    """The reader's module and the course's with the same weights, float64, eval mode; with
    G = H the course's is the paper's MultiHeadAttention."""
    B, h, g, d_k = sizes(rng)
    H, G = (h, g) if H is None else (H, G)
    d_model = H * d_k
    theirs = (course.MultiHeadAttention(d_model, H) if G == H else
              CourseGQA(d_model, H, G)).double().eval()
    mine = build(mod, "GroupedQueryAttention", d_model, H, G)
    layer_names(mine, d_model, H)
    cache_shapes(mine, d_model, H, G)
    copy_weights(mine, theirs)
    return B, H, G, d_model, mine, theirs


def attend(mine, query, key, value, mask=None):
    result = mine(query, key, value, mask)
    if not (isinstance(result, tuple) and len(result) == 2):
        raise CheckFailed(tr("a pair (output, weights)", "一对值 `(output, weights)`"),
                          type(result).__name__,
                          tr("return self.w_o(merged heads) and the attention weights",
                             "返回 self.w_o(合并后的多头) 和注意力权重"))
    return result


def expect_attention(mine, theirs, H, G, query, key, value, mask=None, hint=SHARED_VALUE,
                     extra=(), atol=1e-10):
    """The reader's (output, weights) equal the course's, a known slip named if they match it."""
    out, weights = attend(mine, query, key, value, mask)
    with torch.no_grad():
        want_out, want_weights = theirs(query, key, value, mask)
    slips = sharing_mistakes(theirs, H, G, query, key, value, mask) + list(extra)
    expect_close(out, want_out, "output", hint, [(o, h) for (o, _), h in slips], atol=atol)
    expect_close(weights, want_weights, "weights", hint, [(w, h) for (_, w), h in slips],
                 atol=atol)


ORDER = "repeat_kv: head j of the result is head j // group of x"
NAMES = "has w_q, w_k, w_v, w_o = nn.Linear with a bias; w_q and w_o: d_model -> d_model"
CACHE = "w_k and w_v: d_model -> num_kv_heads * d_k, a cache num_heads / num_kv_heads times smaller"
SHAPES = "returns (output (B, T_q, d_model), weights (B, num_heads, T_q, T_k))"
SHARING = "equals the course's grouped-query attention: query head i reads head i // group"
ENDS = "num_kv_heads = num_heads is the paper's multi-head attention, num_kv_heads = 1 multi-query"
MASK = "the mask reaches every query head: padding and causal, True = may attend"
ALL_MASKED = "a query with every key masked: zero weights, no NaN"
OWN = "shares the heads itself: nothing of aiayn's grouped-query attention, no fused attention"


@ex.check(ORDER, zh="repeat_kv：结果的第 j 个头是 x 的第 j // group 个头")
def _(mod, rng):
    B, H, G, d_k = sizes(rng)
    group, T = H // G, int(rng.integers(3, 6))
    x = tensor(rng, B, G, T, d_k)
    got = need(mod, "repeat_kv")(x.clone(), group)
    what = f"repeat_kv(x, {group})"
    expect_array(got, "torch", what)
    expect_shape(got, (B, H, T, d_k), what, tr(
        "(B, G, T, d) -> (B, G * group, T, d): repeat along the heads axis, dim=1",
        "(B, G, T, d) -> (B, G * group, T, d)：沿头所在的维（dim=1）重复"))
    expect_close(got, course_repeat_kv(x, group), what, tr(
        "head j is a copy of head j // group: x.repeat_interleave(group, dim=1)",
        "第 j 个头是第 j // group 个头的副本：x.repeat_interleave(group, dim=1)"),
        [(x.repeat(1, group, 1, 1), TILED)], atol=0.0, rtol=0.0)
    expect_close(need(mod, "repeat_kv")(x.clone(), 1), x, "repeat_kv(x, 1)", tr(
        "a group of one query head: every head once, as it is",
        "每组只有一个查询头：每个头原样出现一次"), atol=0.0, rtol=0.0)


@ex.check(NAMES, zh="有 w_q、w_k、w_v、w_o，都是带偏置的 nn.Linear；w_q 和 w_o：d_model -> d_model")
def _(mod, rng):
    _, H, G, d_k = sizes(rng)
    layer_names(build(mod, "GroupedQueryAttention", H * d_k, H, G), H * d_k, H)


@ex.check(CACHE, zh="w_k 和 w_v：d_model -> num_kv_heads * d_k，缓存缩小为原来的 num_kv_heads / num_heads")
def _(mod, rng):
    _, H, G, d_k = sizes(rng)
    for g in (G, 1):
        cache_shapes(build(mod, "GroupedQueryAttention", H * d_k, H, g), H * d_k, H, g)


@ex.check(SHAPES, zh="返回 (output (B, T_q, d_model), weights (B, num_heads, T_q, T_k))")
def _(mod, rng):
    B, H, G, d_model, mine, theirs = pair(mod, rng)
    T_q = int(rng.integers(3, 6))
    T_k = T_q + int(rng.integers(1, 4))
    query, memory = tensor(rng, B, T_q, d_model), tensor(rng, B, T_k, d_model)
    out, weights = attend(mine, query, memory, memory)
    expect_array(out, "torch", "output")
    expect_shape(out, (B, T_q, d_model), "output", tr(
        "merge the num_heads heads back to (B, T_q, num_heads * d_k), then w_o",
        "把 num_heads 个头合并回 (B, T_q, num_heads * d_k)，再用 w_o 投影"))
    expect_array(weights, "torch", "weights")
    hint = FOLDED if tuple(weights.shape) == (B, G, H // G * T_q, T_k) else tr(
        "one attention map per query head: (B, num_heads, T_q, T_k), the keys repeated for "
        "each group before the attention", "每个查询头一张注意力图：(B, num_heads, T_q, T_k)，"
        "在做注意力之前按组重复键")
    expect_shape(weights, (B, H, T_q, T_k), "weights", hint)


@ex.check(SHARING, zh="与课程的分组查询注意力相同：第 i 个查询头读第 i // group 个键/值头")
def _(mod, rng):
    B, H, G, d_model, mine, theirs = pair(mod, rng)
    T_q = int(rng.integers(3, 6))
    query, memory = tensor(rng, B, T_q, d_model), tensor(rng, B, T_q + 2, d_model)
    expect_attention(mine, theirs, H, G, query, memory, memory)


@ex.check(ENDS, zh="num_kv_heads = num_heads 时就是论文的多头注意力，num_kv_heads = 1 时是多查询注意力")
def _(mod, rng):
    _, H, _, _ = sizes(rng)
    for G, hint in ((H, tr("with num_kv_heads = num_heads every query head has its own key/value "
                           "head: the paper's multi-head attention, with the same weights",
                           "num_kv_heads = num_heads 时，每个查询头都有自己的键/值头：就是论文的多头"
                           "注意力，权重相同")),
                    (1, tr("with num_kv_heads = 1 every query head reads the one key/value head "
                           "(multi-query attention)",
                           "num_kv_heads = 1 时，每个查询头都读那唯一的一个键/值头（多查询注意力）"))):
        B, H, G, d_model, mine, theirs = pair(mod, rng, H, G)
        x = tensor(rng, B, int(rng.integers(3, 6)), d_model)
        expect_attention(mine, theirs, H, G, x, x, x, hint=hint)  # G = H: i // G reads head 0


@ex.check(MASK, zh="掩码传到每个查询头：填充掩码和因果掩码，True 表示可以关注")
def _(mod, rng):
    B, H, G, d_model, mine, theirs = pair(mod, rng)
    T = int(rng.integers(4, 7))
    x = tensor(rng, B, T, d_model)
    mask = torch.from_numpy(padding(rng, B, T)) & torch.ones(T, T, dtype=torch.bool).tril()
    mask[..., 0] = True  # every query keeps key 0: no all-masked row in this check
    with torch.no_grad():
        slips = [(theirs(x, x, x, ~mask), MASK_HINT), (theirs(x, x, x), IGNORED)]
    expect_attention(mine, theirs, H, G, x, x, x, mask, tr(
        "block the keys where the mask is False, in the scores of every query head, before the "
        "softmax", "在 softmax 之前，在每个查询头的分数里屏蔽掩码为 False 的键"), slips)


@ex.check(ALL_MASKED, zh="所有键都被屏蔽的查询：权重为 0，没有 NaN")
def _(mod, rng):
    B, H, G, d_model, mine, theirs = pair(mod, rng)
    T_q = int(rng.integers(3, 6))
    query, memory = tensor(rng, B, T_q, d_model), tensor(rng, B, T_q + 2, d_model)
    mask = torch.from_numpy(all_masked_row(rng, B, T_q, T_q + 2))
    out, weights = attend(mine, query, memory, memory, mask)
    for name, got in (("weights", weights), ("output", out)):
        expect_finite(as_numpy(got), name, ALL_MASKED_HINT)
    with torch.no_grad():
        slips = [(theirs(query, memory, memory, ~mask), MASK_HINT),
                 (theirs(query, memory, memory), IGNORED)]
    expect_attention(mine, theirs, H, G, query, memory, memory, mask, ALL_MASKED_HINT, slips)


@ex.check(OWN, zh="自己让各头共用键和值：不用 aiayn 的分组查询注意力，也不用融合的注意力")
def _(mod, rng):
    B, H, G, d_k = sizes(rng)
    x = tensor(rng, B, 4, H * d_k)

    def run():
        return build(mod, "GroupedQueryAttention", H * d_k, H, G)(x, x, x)

    _, course_calls, builtins = calls_made(run)
    used = [c for c in course_calls if c.split(":")[0] in (
        "aiayn/pt/gqa.py", "aiayn/np/gqa.py", "aiayn/pt/variants.py", "aiayn/np/variants.py")]
    used += ["F.scaled_dot_product_attention" for f in builtins
             if f is torch.nn.functional.scaled_dot_product_attention]
    if used:
        raise CheckFailed(tr("the key/value sharing written by your code",
                             "由你自己的代码让各头共用键和值"),
                          tr(", ", "、").join(list(dict.fromkeys(used))[:3]), tr(
                              "write the layer here: w_k and w_v to num_kv_heads heads, repeat_kv, "
                              "the paper's attention, w_o. aiayn.pt.gqa is what your code is "
                              "compared with, and F.scaled_dot_product_attention returns no "
                              "weights",
                              "在这里自己写这个层：w_k 和 w_v 投影成 num_kv_heads 个头，repeat_kv，"
                              "论文的注意力，w_o。aiayn.pt.gqa 正是评分时用来对照的答案，而 "
                              "F.scaled_dot_product_attention 不返回注意力权重"))


ex.keeps({
    "repeat_kv: order": ORDER,
    "GroupedQueryAttention: names": NAMES,
    "GroupedQueryAttention: cache": CACHE,
    "GroupedQueryAttention.forward: shapes": SHAPES,
    "GroupedQueryAttention.forward: sharing": SHARING,
    "GroupedQueryAttention.forward: ends": ENDS,
    "GroupedQueryAttention.forward: mask": MASK,
    "GroupedQueryAttention.forward: all-masked": ALL_MASKED,
    "GroupedQueryAttention.forward: own": OWN,
})
