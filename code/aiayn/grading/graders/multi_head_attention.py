"""Grader of the chapter "Multi-head attention": ``split_heads`` and ``merge_heads`` in NumPy,
checked against ``aiayn.np.attention`` on random shapes where B, H, T and d_k all differ, so
that a missing or wrong transpose gives different numbers (or a different shape), not the same
ones by accident."""

from ...np.attention import merge_heads as course_merge
from ...np.attention import split_heads as course_split
from ..compare import call_on_read_only, expect_array, expect_close, expect_shape
from ..core import exercise, need
from ..language import Text, tr

ex = exercise("multi_head_attention/split_merge_heads", "multi_head_attention/split_merge_heads.py",
              "split_heads (B, T, d_model) -> (B, H, T, d_k) and merge_heads, its inverse",
              zh="split_heads (B, T, d_model) -> (B, H, T, d_k)，以及它的逆 merge_heads")

SPLIT_NO_TRANSPOSE = Text("you reshaped (B, T, d_model) straight to (B, H, T, d_k): the shape is "
                          "right, but 'head 0' now holds the first T * d_k numbers of the "
                          "sentence, pieces of several positions. Reshape to (B, T, H, d_k) "
                          "first, then transpose the axes 1 and 2",
                          "你把 (B, T, d_model) 直接 reshape 成了 (B, H, T, d_k)：形状对了，但"
                          "“头 0”装的是句子开头的 T * d_k 个数，来自好几个位置。先 reshape 成 "
                          "(B, T, H, d_k)，再交换第 1、2 维")
SPLIT_INTERLEAVED = Text("you cut the features as (d_k, H), so head h got every H-th feature: "
                         "reshape to (B, T, H, d_k) (head h = features h * d_k ... (h + 1) * d_k "
                         "- 1), then transpose the axes 1 and 2",
                         "你按 (d_k, H) 切分特征，于是头 h 拿到的是每隔 H 个取一个的特征：要 "
                         "reshape 成 (B, T, H, d_k)（头 h 拿第 h * d_k ... (h + 1) * d_k - 1 个"
                         "特征），再交换第 1、2 维")
MERGE_NO_TRANSPOSE = Text("you reshaped (B, H, T, d_k) straight to (B, T, H * d_k) without "
                          "moving the heads axis: each 'position' now holds pieces of several "
                          "positions of one head. Transpose to (B, T, H, d_k) first, then reshape",
                          "你没有移动头所在的维，就把 (B, H, T, d_k) 直接 reshape 成了 "
                          "(B, T, H * d_k)：每个“位置”装的是同一个头在几个位置上的片段。先转置成 "
                          "(B, T, H, d_k)，再 reshape")
MERGE_INTERLEAVED = Text("you put the features in (d_k, H) order: position t must hold head 0's "
                         "d_k features, then head 1's, ...: (B, T, H, d_k) before the reshape",
                         "你按 (d_k, H) 的顺序排列特征：位置 t 要先放头 0 的 d_k 个特征，再放头 1 "
                         "的，依此类推：reshape 之前应是 (B, T, H, d_k)")
SPLIT = Text("split heads", "拆分后的多头")
MERGED = Text("merged heads", "合并后的多头")
SPLIT_VALUE = Text("head h at position t holds x[b, t, h * d_k:(h + 1) * d_k]",
                   "头 h 在位置 t 上的值是 x[b, t, h * d_k:(h + 1) * d_k]")


def random_sizes(rng):
    B, H = int(rng.integers(2, 4)), int(rng.integers(2, 5))
    T = H + int(rng.integers(1, 4))
    d_k = T + int(rng.integers(1, 4))  # B, H, T, d_k all different, and T != d_k
    return B, H, T, d_k


def split_mistakes(x, H):
    B, T, D = x.shape
    return [(x.reshape(B, H, T, D // H), SPLIT_NO_TRANSPOSE),
            (x.reshape(B, T, D // H, H).transpose(0, 3, 1, 2), SPLIT_INTERLEAVED)]


def merge_mistakes(x):
    B, H, T, d_k = x.shape
    return [(x.reshape(B, T, H * d_k), MERGE_NO_TRANSPOSE),
            (x.transpose(0, 2, 3, 1).reshape(B, T, H * d_k), MERGE_INTERLEAVED)]


@ex.check("split_heads: (B, T, d_model) -> (B, H, T, d_k), equal to the course's",
          zh="split_heads：(B, T, d_model) -> (B, H, T, d_k)，与课程的实现相同")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    got = need(mod, "split_heads")(x.copy(), H)
    expect_array(got, "numpy", SPLIT)
    expect_shape(got, (B, H, T, d_k), SPLIT, tr(
        "the heads axis comes second: (B, H, T, d_k) with d_k = d_model // num_heads",
        "头所在的维排第二：(B, H, T, d_k)，其中 d_k = d_model // num_heads"))
    expect_close(got, course_split(x, H), SPLIT, SPLIT_VALUE + Text(
        ": reshape to (B, T, H, d_k), then transpose", "：先 reshape 成 (B, T, H, d_k)，再转置"),
        split_mistakes(x, H), atol=0.0, rtol=0.0)


@ex.check("merge_heads: (B, H, T, d_k) -> (B, T, H * d_k), equal to the course's",
          zh="merge_heads：(B, H, T, d_k) -> (B, T, H * d_k)，与课程的实现相同")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, H, T, d_k))
    got = need(mod, "merge_heads")(x.copy())
    expect_array(got, "numpy", MERGED)
    expect_shape(got, (B, T, H * d_k), MERGED, tr(
        "concatenate the heads along the features: (B, T, H * d_k)",
        "沿特征维把各个头拼起来：(B, T, H * d_k)"))
    expect_close(got, course_merge(x), MERGED, tr(
        "position t holds head 0's features at t, then head 1's, ...: transpose to "
        "(B, T, H, d_k), then reshape",
        "位置 t 先放头 0 在 t 处的特征，再放头 1 的，依此类推：先转置成 (B, T, H, d_k)，再 "
        "reshape"), merge_mistakes(x), atol=0.0, rtol=0.0)


@ex.check("merge_heads undoes split_heads, and split_heads undoes merge_heads",
          zh="merge_heads 能还原 split_heads 的结果，split_heads 也能还原 merge_heads 的结果")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    heads = rng.standard_normal((B, H, T, d_k))
    split, merge = need(mod, "split_heads"), need(mod, "merge_heads")
    # A pair that both skip the transpose passes these round trips: the two checks above are
    # what catch it. These catch a merge that is not the inverse of the reader's own split.
    expect_close(merge(split(x.copy(), H)), x, "merge_heads(split_heads(x, H))", tr(
        "merge_heads must reverse exactly what split_heads does, in reverse order: transpose "
        "back to (B, T, H, d_k), then reshape",
        "merge_heads 要按相反的顺序，恰好撤销 split_heads 做的事：先转置回 (B, T, H, d_k)，"
        "再 reshape"), atol=0.0, rtol=0.0)
    expect_close(split(merge(heads.copy()), H), heads, "split_heads(merge_heads(heads), H)", tr(
        "split_heads must reverse merge_heads: reshape to (B, T, H, d_k), then transpose the "
        "axes 1 and 2", "split_heads 要撤销 merge_heads：先 reshape 成 (B, T, H, d_k)，再交换"
        "第 1、2 维"), atol=0.0, rtol=0.0)


UNCHANGED = "split_heads leaves x unchanged"


@ex.check(UNCHANGED, zh="split_heads 不修改 x")
def _(mod, rng):
    B, H, T, d_k = random_sizes(rng)
    x = rng.standard_normal((B, T, H * d_k))
    got = call_on_read_only(need(mod, "split_heads"), {"x": x, "num_heads": H}, tr(
        "the caller still needs x as it was: x.reshape(...) and .transpose(...) return new views "
        "and leave x alone, while x.shape = ... or x[...] = ... change the caller's array",
        "调用者还要用原来的 x：x.reshape(...) 和 .transpose(...) 返回新的视图，不会改动 x；而 "
        "x.shape = ... 或 x[...] = ... 会改掉调用者的数组"))
    expect_close(got, course_split(x, H), SPLIT, SPLIT_VALUE, split_mistakes(x, H), atol=0.0,
                 rtol=0.0)


INVERSE = "merge_heads undoes split_heads, and split_heads undoes merge_heads"
ex.keeps({
    "split_heads: value": ("split_heads: (B, T, d_model) -> (B, H, T, d_k), equal to the "
                           "course's", INVERSE),
    "split_heads: input-unchanged": UNCHANGED,
    "merge_heads: value": ("merge_heads: (B, H, T, d_k) -> (B, T, H * d_k), equal to the "
                           "course's", INVERSE),
})
